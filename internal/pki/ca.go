package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"time"
)

// CA is a deployment's internal certificate authority: it signs the
// certificates of the deployment's processes and nothing else.
type CA struct {
	Cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

// caValidity is how long a new CA lasts; node certificates last less.
const caValidity = 10 * 365 * 24 * time.Hour

// DefaultValidity is how long an issued node certificate lasts.
const DefaultValidity = 365 * 24 * time.Hour

// NewCA makes a new authority named name (e.g. "jobbie dev ca").
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: ca key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Jobbie"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("pki: ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// LoadCA reads an authority from its certificate and key files.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("pki: read ca certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("pki: read ca key: %w", err)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", certFile, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("pki: %s is not a certificate authority", certFile)
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", keyFile, err)
	}
	return &CA{Cert: cert, key: key, pem: certPEM}, nil
}

// CertPEM is the authority's certificate, which every process trusts.
func (ca *CA) CertPEM() []byte { return ca.pem }

// WriteFiles saves the authority: the certificate world-readable, the key
// readable by its owner only.
func (ca *CA) WriteFiles(certFile, keyFile string) error {
	keyPEM, err := encodeKey(ca.key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return fmt.Errorf("pki: write ca key: %w", err)
	}
	if err := os.WriteFile(certFile, ca.pem, 0o644); err != nil {
		return fmt.Errorf("pki: write ca certificate: %w", err)
	}
	return nil
}

// Issue signs a certificate for id, good for validFor (DefaultValidity
// if zero) and, for tools that check names, for hosts (IPs or DNS
// names), with a new key it returns. Peers in Jobbie check the identity,
// not the host.
func (ca *CA) Issue(id Identity, hosts []string, validFor time.Duration) (certPEM, keyPEM []byte, err error) {
	if err := id.Validate(); err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: key: %w", err)
	}
	certPEM, err = ca.IssueKey(key.Public(), id, hosts, validFor)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// IssueKey signs a certificate for id over a public key whose private
// half stays with its holder (a self-hosted shard node joining: control
// signs the key the node sent). The issuer alone decides id, hosts and
// validFor, as in Issue.
func (ca *CA) IssueKey(pub crypto.PublicKey, id Identity, hosts []string, validFor time.Duration) (certPEM []byte, err error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if err := checkPublicKey(pub); err != nil {
		return nil, err
	}
	if validFor <= 0 {
		validFor = DefaultValidity
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: id.String(), Organization: []string{"Jobbie"}},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Every process both serves and dials.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:        []*url.URL{id.URI()},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.key)
	if err != nil {
		return nil, fmt.Errorf("pki: sign %s: %w", id, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic("pki: no randomness: " + err.Error())
	}
	return n
}

func encodeKey(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("pki: encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func parseCert(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// ParseKey reads a PEM private key (PKCS #8 or SEC 1 EC) as a signer.
func ParseKey(b []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if ek, err2 := x509.ParseECPrivateKey(block.Bytes); err2 == nil {
			return ek, nil
		}
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported key type %T", k)
	}
	return s, nil
}
