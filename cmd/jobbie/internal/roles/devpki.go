package roles

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
)

// devPKI is `jobbie dev`'s own CA, in <data-dir>/pki, and the
// certificates it gives the processes it runs. Certificates are issued
// afresh at every start; the CA is made once, so files issued earlier
// (an operator certificate handed to a tool) stay valid.
type devPKI struct {
	dir string
	ca  *pki.CA
}

// devCertValidity is how long a dev certificate lasts: a dev service
// restarts long before.
const devCertValidity = 30 * 24 * time.Hour

func openDevPKI(dataDir string) (*devPKI, error) {
	dir := filepath.Join(dataDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	ca, err := pki.LoadCA(certFile, keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		if ca, err = pki.NewCA("jobbie dev ca"); err == nil {
			err = ca.WriteFiles(certFile, keyFile)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("dev ca: %w", err)
	}
	return &devPKI{dir: dir, ca: ca}, nil
}

// openSelfHostedCA is the dev service's CA for self-hosted shards, in
// <data-dir>/pki/selfhosted: apart from the dev CA, as in production,
// so what it signs is trusted only where a self-hosted shard may speak.
func openSelfHostedCA(dataDir string) (*pki.CA, error) {
	dir := selfHostedCADir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	ca, err := pki.LoadCA(certFile, keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		if ca, err = pki.NewCA("jobbie dev self-hosted shards ca"); err == nil {
			err = ca.WriteFiles(certFile, keyFile)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("self-hosted shards ca: %w", err)
	}
	return ca, nil
}

func selfHostedCADir(dataDir string) string { return filepath.Join(dataDir, "pki", "selfhosted") }

// creds issues id a certificate held in memory, for a role in this process.
func (d *devPKI) creds(id pki.Identity) (*pki.Credentials, error) {
	certPEM, keyPEM, err := d.ca.Issue(id, []string{"127.0.0.1", "localhost"}, devCertValidity)
	if err != nil {
		return nil, err
	}
	return pki.NewCredentials(certPEM, keyPEM, d.ca.CertPEM())
}

// files issues id a certificate into <dir>/<name>.crt and .key and
// returns the --tls-* flags that use it.
func (d *devPKI) files(name string, id pki.Identity) ([]string, error) {
	prefix := filepath.Join(d.dir, name)
	certPEM, keyPEM, err := d.ca.Issue(id, []string{"127.0.0.1", "localhost"}, devCertValidity)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(prefix+".key", keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(prefix+".crt", certPEM, 0o644); err != nil {
		return nil, err
	}
	return []string{"--tls-cert", prefix + ".crt", "--tls-key", prefix + ".key", "--tls-ca", filepath.Join(d.dir, "ca.crt")}, nil
}

// readOrCreateGossipKey returns the path of the dev cluster's gossip key,
// making a random AES-256 key on first start.
func readOrCreateGossipKey(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "gossip.key")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600)
}
