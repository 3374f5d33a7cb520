package bench

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/jobbie/jobbie/internal/atomicfile"
)

// ErrNewReceiverCert is returned by Run in push mode when it has just
// written the receiver's certificate: the server under test was started
// before it existed, so it cannot trust it yet.
var ErrNewReceiverCert = errors.New("bench: new push receiver certificate")

// receiverCert loads the push receiver's certificate and key, or, when
// neither file exists, writes a new self-signed pair for 127.0.0.1, ::1
// and localhost and returns ErrNewReceiverCert: the server must be
// started with --push-ca-file naming the certificate before a run can
// be delivered to.
func receiverCert(certFile, keyFile string) (tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err == nil {
		return c, nil
	}
	_, certErr := os.Stat(certFile)
	_, keyErr := os.Stat(keyFile)
	if !errors.Is(certErr, fs.ErrNotExist) || !errors.Is(keyErr, fs.ErrNotExist) {
		return tls.Certificate{}, fmt.Errorf("bench: push receiver certificate: %w", err)
	}
	certPEM, keyPEM, err := selfSigned()
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := atomicfile.Write(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := atomicfile.Write(certFile, certPEM, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{}, fmt.Errorf("%w: wrote %s; start the server with --push-allow-private --push-ca-file %s, then run again",
		ErrNewReceiverCert, certFile, certFile)
}

// selfSigned makes an ECDSA P-256 certificate valid for a year, its own
// CA, for the loopback names.
func selfSigned() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "jobbie bench push receiver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}
