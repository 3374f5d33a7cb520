package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// Credentials are one process's certificate and key and the authority it
// trusts. Servers and clients built from them require and check each
// other's certificates.
type Credentials struct {
	id    Identity
	roots *x509.CertPool
	cert  atomic.Pointer[tls.Certificate]
	files [3]string // cert, key, ca: where Reload reads
}

// LoadCredentials reads a process's certificate, key and CA certificate.
func LoadCredentials(certFile, keyFile, caFile string) (*Credentials, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("pki: read certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("pki: read key: %w", err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("pki: read ca certificate: %w", err)
	}
	c, err := NewCredentials(certPEM, keyPEM, caPEM)
	if err != nil {
		return nil, err
	}
	c.files = [3]string{certFile, keyFile, caFile}
	return c, nil
}

// NewCredentials builds credentials from PEM: a certificate the CA signed,
// its key, and the CA's certificate.
func NewCredentials(certPEM, keyPEM, caPEM []byte) (*Credentials, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("pki: no CA certificate in the CA file")
	}
	c := &Credentials{roots: roots}
	if err := c.set(certPEM, keyPEM); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Credentials) set(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("pki: certificate and key: %w", err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return err
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return fmt.Errorf("pki: the certificate is not from the trusted CA: %w", err)
	}
	id, err := IdentityOf(leaf)
	if err != nil {
		return err
	}
	if c.cert.Load() == nil {
		c.id = id // once, at construction: a reload only checks it, so Identity needs no lock
	} else if id != c.id {
		return fmt.Errorf("pki: the new certificate is for %s, not %s", id, c.id)
	}
	c.cert.Store(&pair)
	return nil
}

// Reload reads the certificate and key files again (after a renewal); the
// identity must not change. Connections made afterwards use the new pair.
func (c *Credentials) Reload() error {
	if c.files[0] == "" {
		return errors.New("pki: credentials not loaded from files")
	}
	certPEM, err := os.ReadFile(c.files[0])
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(c.files[1])
	if err != nil {
		return err
	}
	return c.set(certPEM, keyPEM)
}

// Identity is who these credentials speak for.
func (c *Credentials) Identity() Identity { return c.id }

// NotAfter is when the certificate expires.
func (c *Credentials) NotAfter() time.Time { return c.cert.Load().Leaf.NotAfter }

// Server returns a TLS server configuration that requires a client
// certificate from the CA and admits only peers allow accepts.
func (c *Credentials) Server(allow Policy) *tls.Config {
	return &tls.Config{
		MinVersion:       tls.VersionTLS13,
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        c.roots,
		GetCertificate:   func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cert.Load(), nil },
		VerifyConnection: func(cs tls.ConnectionState) error { return check(cs, allow) },
	}
}

// ServerCertOptional returns a TLS server configuration for a listener
// that also serves clients without certificates (control's operator API,
// which takes operator keys): a certificate, if presented, must be from
// the CA; routes that need one check it with Require.
func (c *Credentials) ServerCertOptional() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS13,
		ClientAuth:     tls.VerifyClientCertIfGiven,
		ClientCAs:      c.roots,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cert.Load(), nil },
	}
}

// Client returns a TLS client configuration that presents these
// credentials and admits only a server from the CA that expect accepts.
// The server's address is not checked: where a peer is comes from gossip
// or configuration, who it is comes from its certificate.
func (c *Credentials) Client(expect Policy) *tls.Config {
	return &tls.Config{
		MinVersion:           tls.VersionTLS13,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return c.cert.Load(), nil },
		// The chain is verified below against the CA, by identity rather
		// than host name.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return &PeerError{errors.New("pki: the server sent no certificate")}
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			if _, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: c.roots, Intermediates: inter,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return &PeerError{fmt.Errorf("pki: the server's certificate is not from the trusted CA: %w", err)}
			}
			return check(cs, expect)
		},
	}
}

// PeerError is a handshake this side refused: the peer's certificate was
// missing, not from the CA, or named an identity the policy does not
// admit. No request went over the connection.
type PeerError struct{ Err error }

func (e *PeerError) Error() string { return e.Err.Error() }
func (e *PeerError) Unwrap() error { return e.Err }

func check(cs tls.ConnectionState, p Policy) error {
	if len(cs.PeerCertificates) == 0 {
		return &PeerError{errors.New("pki: the peer sent no certificate")}
	}
	id, err := IdentityOf(cs.PeerCertificates[0])
	if err != nil {
		return &PeerError{err}
	}
	if p == nil {
		return nil
	}
	if err := p(id); err != nil {
		return &PeerError{err}
	}
	return nil
}

// PeerIdentity is the identity of the peer of a connection made with a
// configuration from Server or Client (which verified it), for a server
// that decides per request what the peer may do.
func PeerIdentity(cs *tls.ConnectionState) (Identity, bool) {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return Identity{}, false
	}
	id, err := IdentityOf(cs.PeerCertificates[0])
	return id, err == nil
}
