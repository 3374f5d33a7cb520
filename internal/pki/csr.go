package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"time"
)

// NewCSR makes a key and a certificate signing request for id and hosts,
// for a process whose key must never leave it (a self-hosted shard node
// joining): it sends the CSR, keeps keyPEM, and gets back the certificate
// from IssueCSR. The zero Identity makes a request that names none, for
// a requester that learns who it is from the certificate (a node joining
// with a token, whose shard the token decides).
func NewCSR(id Identity, hosts []string) (csrPEM, keyPEM []byte, err error) {
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{Organization: []string{"Jobbie"}}}
	if id != (Identity{}) {
		if err := id.Validate(); err != nil {
			return nil, nil, err
		}
		tmpl.Subject.CommonName = id.String()
		tmpl.URIs = []*url.URL{id.URI()}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: key: %w", err)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: csr: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), keyPEM, nil
}

// ParseCSR reads a PEM certificate signing request and checks its
// signature: whoever sent it holds the private key of the public key it
// carries.
func ParseCSR(csrPEM []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("pki: no PEM certificate request")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate request: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("pki: the certificate request's signature does not match its key: %w", err)
	}
	return csr, nil
}

// IssueCSR signs the key of a certificate signing request for id, which
// the issuer decides (from a join token, say), never the request: a
// request that asks for anything else, another identity or a host not in
// hosts, is refused rather than narrowed, so the requester learns that
// it did not get what it asked for. A request that names nothing gets
// id and hosts.
func (ca *CA) IssueCSR(csrPEM []byte, id Identity, hosts []string, validFor time.Duration) (certPEM []byte, err error) {
	csr, err := ParseCSR(csrPEM)
	if err != nil {
		return nil, err
	}
	if err := id.Validate(); err != nil {
		return nil, err
	}
	for _, u := range csr.URIs {
		asked, err := ParseIdentity(u.String())
		if err != nil {
			return nil, fmt.Errorf("pki: the certificate request names %q, not an identity", u)
		}
		if asked != id {
			return nil, fmt.Errorf("pki: the certificate request asks for %s; the issuer grants %s", asked, id)
		}
	}
	if len(csr.EmailAddresses) > 0 {
		return nil, errors.New("pki: the certificate request asks for email addresses; none are issued")
	}
	for _, ip := range csr.IPAddresses {
		if !slices.ContainsFunc(hosts, func(h string) bool { return ip.Equal(net.ParseIP(h)) }) {
			return nil, fmt.Errorf("pki: the certificate request asks for host %s, which the issuer does not grant", ip)
		}
	}
	for _, d := range csr.DNSNames {
		if !slices.Contains(hosts, d) {
			return nil, fmt.Errorf("pki: the certificate request asks for host %s, which the issuer does not grant", d)
		}
	}
	return ca.IssueKey(csr.PublicKey, id, hosts, validFor)
}

// checkPublicKey admits the keys TLS 1.3 peers here can use, of a
// strength worth vouching for.
func checkPublicKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() && k.Curve != elliptic.P521() {
			return errors.New("pki: an ECDSA key must be on P-256, P-384 or P-521")
		}
	case ed25519.PublicKey:
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return fmt.Errorf("pki: an RSA key of %d bits is too short (2048 at least)", k.N.BitLen())
		}
	default:
		return fmt.Errorf("pki: unsupported public key type %T (ECDSA, Ed25519 or RSA)", pub)
	}
	return nil
}
