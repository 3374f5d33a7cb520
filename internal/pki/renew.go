package pki

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Renewing a certificate on the proof of the current one (a self-hosted
// node's, at control): VerifyRenewal is every check of the two inputs,
// in one call, so the caller keeps only its own policy (which identities
// it renews, whether their records still stand).

// RenewalProblem is why a renewal's inputs were refused.
type RenewalProblem int

// The problems VerifyRenewal reports.
const (
	// RenewalMalformed: the certificate or the request cannot be read,
	// or the request's signature does not match its own key.
	RenewalMalformed RenewalProblem = iota
	// RenewalExpired: a certificate of the CA, expired. No grace: a
	// certificate peers already refuse renews nothing.
	RenewalExpired
	// RenewalUntrusted: the certificate does not chain to the CA, or is
	// not valid for client authentication now.
	RenewalUntrusted
	// RenewalNoIdentity: the certificate names no identity.
	RenewalNoIdentity
	// RenewalNotPossessed: the request is not signed by the certificate's
	// key, so its sender need not hold the key (a certificate is public).
	RenewalNotPossessed
	// RenewalOtherIdentity: the request asks for another identity than
	// the certificate's.
	RenewalOtherIdentity
)

// RenewalError is VerifyRenewal's refusal: the input at fault
// ("certificate" or "csr"), the problem, and the certificate's expiry
// for RenewalExpired.
type RenewalError struct {
	Field    string
	Problem  RenewalProblem
	NotAfter time.Time
	Err      error
}

func (e *RenewalError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *RenewalError) Unwrap() error { return e.Err }

// VerifyRenewal checks a renewal's certificate and request against ca at
// now: the certificate chains to ca and is valid now (for client
// authentication), the request carries the certificate's own public key
// and is signed by it (proof of possession), and asks for no identity but
// the certificate's. It returns the certificate's identity and expiry; a
// refusal is a *RenewalError.
func (ca *CA) VerifyRenewal(certPEM, csrPEM []byte, now time.Time) (Identity, *x509.Certificate, error) {
	cert, err := ParseOneCert(certPEM)
	if err != nil {
		return Identity{}, nil, &RenewalError{Field: "certificate", Problem: RenewalMalformed, Err: err}
	}
	csr, err := ParseCSR(csrPEM)
	if err != nil {
		return Identity{}, nil, &RenewalError{Field: "csr", Problem: RenewalMalformed, Err: err}
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		if now.After(cert.NotAfter) && cert.CheckSignatureFrom(ca.Cert) == nil {
			return Identity{}, nil, &RenewalError{Field: "certificate", Problem: RenewalExpired, NotAfter: cert.NotAfter, Err: err}
		}
		return Identity{}, nil, &RenewalError{Field: "certificate", Problem: RenewalUntrusted, Err: err}
	}
	id, err := IdentityOf(cert)
	if err != nil {
		return Identity{}, nil, &RenewalError{Field: "certificate", Problem: RenewalNoIdentity, Err: err}
	}
	if pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(csr.PublicKey) {
		return Identity{}, nil, &RenewalError{Field: "csr", Problem: RenewalNotPossessed,
			Err: errors.New("pki: the certificate request is not signed by the certificate's key")}
	}
	for _, u := range csr.URIs {
		asked, err := ParseIdentity(u.String())
		if err != nil {
			return Identity{}, nil, &RenewalError{Field: "csr", Problem: RenewalOtherIdentity,
				Err: fmt.Errorf("pki: the certificate request names %q, not an identity", u)}
		}
		if asked != id {
			return Identity{}, nil, &RenewalError{Field: "csr", Problem: RenewalOtherIdentity,
				Err: fmt.Errorf("pki: the certificate request asks for %s; the issuer grants %s", asked, id)}
		}
	}
	return id, cert, nil
}

// ParseOneCert reads a PEM text holding exactly one certificate.
func ParseOneCert(b []byte) (*x509.Certificate, error) {
	block, rest := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errNoPEMCert
	}
	if more, _ := pem.Decode(rest); more != nil {
		return nil, errMorePEM
	}
	return x509.ParseCertificate(block.Bytes)
}

var (
	errNoPEMCert = errors.New("not a PEM certificate")
	errMorePEM   = errors.New("more than one PEM block: send the node's certificate alone")
)
