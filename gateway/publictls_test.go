package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// selfSigned writes a certificate for 127.0.0.1 named cn, and its key,
// into dir, and returns a pool trusting it.
func selfSigned(t *testing.T, dir, cn string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kd, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	// Written beside and renamed, as a certificate tool would.
	for name, blk := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: kd}} {
		tmp := filepath.Join(dir, name+".tmp")
		require.NoError(t, os.WriteFile(tmp, pem.EncodeToMemory(blk), 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
	}
	crt, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(crt)
	return pool
}

// With PublicCertFile and PublicKeyFile the public port speaks TLS with
// that certificate: a client trusting it is served, a plain HTTP client
// is not.
func TestPublicListenerServesTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pool := selfSigned(t, dir, "one")
	b := newBundle(t)
	b.start(t, func(c *Config) {
		c.PublicCertFile, c.PublicKeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	})
	b.waitReady(t)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get("https://" + b.gw.Addr() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "one", resp.TLS.PeerCertificates[0].Subject.CommonName)

	resp, err = (&http.Client{Timeout: 10 * time.Second}).Get("http://" + b.gw.Addr() + "/healthz")
	if err == nil {
		resp.Body.Close()
		require.NotEqual(t, http.StatusOK, resp.StatusCode, "plain HTTP is not served")
	}
}

// A certificate renewed on disk is served from the next handshake after
// its files changed; a pair that does not load keeps the last one serving.
func TestPublicCertificateIsReloaded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	selfSigned(t, dir, "one")
	r, err := newCertReloader(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), slog.New(slog.DiscardHandler).Warn)
	require.NoError(t, err)
	r.every = 0
	name := func() string {
		c, err := r.get(nil)
		require.NoError(t, err)
		crt, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return crt.Subject.CommonName
	}
	require.Equal(t, "one", name())
	selfSigned(t, dir, "two")
	require.Eventually(t, func() bool { return name() == "two" }, 5*time.Second, 20*time.Millisecond)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), []byte("not a key"), 0o600))
	require.Equal(t, "two", name(), "a pair that does not load keeps the last one")

	_, err = newCertReloader(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), slog.New(slog.DiscardHandler).Warn)
	require.Error(t, err, "a bad pair at start is an error")
	_, err = New(Config{Local: &LocalTrust{TenantID: tenantA, ShardID: "s", ShardAddr: "unix:/x",
		Bundle: (&localNode{}).bundle}, PublicCertFile: "x"})
	require.ErrorContains(t, err, "both")
}
