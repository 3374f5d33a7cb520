package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Signed messages: what a process says outside a TLS connection (a
// gateway's rate-limit demand, sent over gossip datagrams) carries its
// certificate and a signature by its key, so a receiver knows who said
// it as surely as over mutual TLS, and a holder of the gossip pool's key
// alone cannot speak for a gateway. Each use names its purpose, which is
// signed with the message, so a signature made for one use is no good
// for another.

// maxSignedCerts bounds the certificates a verifier remembers (one per
// process that signs, normally a handful of gateways).
const maxSignedCerts = 256

// Sign signs msg for purpose with this process's key, and returns the
// certificate (DER) a receiver verifies it with, and the signature.
func (c *Credentials) Sign(purpose string, msg []byte) (certDER, sig []byte, err error) {
	pair := c.cert.Load()
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("pki: the key cannot sign")
	}
	digest := signedDigest(purpose, msg)
	switch signer.Public().(type) {
	case ed25519.PublicKey:
		sig, err = signer.Sign(rand.Reader, digest, crypto.Hash(0))
	default:
		sig, err = signer.Sign(rand.Reader, digest, crypto.SHA256)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pki: sign: %w", err)
	}
	return pair.Certificate[0], sig, nil
}

// CertificateDER is the certificate Sign sends with a signature now.
func (c *Credentials) CertificateDER() []byte { return c.cert.Load().Certificate[0] }

// signedDigest is what is signed: the purpose, its length first so no
// purpose is a prefix of another's message, then the message.
func signedDigest(purpose string, msg []byte) []byte {
	h := sha256.New()
	h.Write([]byte{byte(len(purpose))})
	h.Write([]byte(purpose))
	h.Write(msg)
	return h.Sum(nil)
}

// Verifier checks signed messages against the CA of a process's
// credentials. It remembers the certificates it has verified, so a
// message from a known sender costs one signature check.
type Verifier struct {
	creds *Credentials

	mu    sync.Mutex
	known map[string]*x509.Certificate // certificate DER → the certificate, verified
}

// Verifier returns a verifier that trusts the CA of these credentials.
func (c *Credentials) Verifier() *Verifier {
	return &Verifier{creds: c, known: map[string]*x509.Certificate{}}
}

// Verify checks that certDER is a certificate from the CA, valid at now,
// and that sig is its key's signature of msg for purpose; it returns the
// identity the certificate names.
func (v *Verifier) Verify(purpose string, certDER, msg, sig []byte, now time.Time) (Identity, error) {
	cert, err := v.cert(certDER, now)
	if err != nil {
		return Identity{}, err
	}
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return Identity{}, errors.New("pki: the signer's certificate is not valid now")
	}
	digest := signedDigest(purpose, msg)
	ok := false
	switch pub := cert.PublicKey.(type) {
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(pub, digest, sig)
	case ed25519.PublicKey:
		ok = ed25519.Verify(pub, digest, sig)
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest, sig) == nil
	}
	if !ok {
		return Identity{}, errors.New("pki: bad signature")
	}
	return IdentityOf(cert)
}

// cert is certDER parsed and verified against the CA, from memory if it
// was before.
func (v *Verifier) cert(certDER []byte, now time.Time) (*x509.Certificate, error) {
	v.mu.Lock()
	cert := v.known[string(certDER)]
	v.mu.Unlock()
	if cert != nil {
		return cert, nil
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("pki: the signer's certificate: %w", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: v.creds.roots, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, fmt.Errorf("pki: the signer's certificate is not from the trusted CA: %w", err)
	}
	v.mu.Lock()
	if len(v.known) >= maxSignedCerts {
		clear(v.known) // renewals add certificates; forgetting costs a chain check each
	}
	v.known[string(certDER)] = cert
	v.mu.Unlock()
	return cert, nil
}
