package roles

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
)

// pushFlags are the operator's switches of push delivery, the same on
// `jobbie dev` and `jobbie shard`: private targets, and extra CAs to
// trust for handlers' certificates (a local receiver's self-signed one).
type pushFlags struct {
	allowPrivate bool
	caFile       string
}

func (p *pushFlags) flags(f *pflag.FlagSet) {
	f.BoolVar(&p.allowPrivate, "push-allow-private", false, "let push queues and webhooks deliver to loopback, private and link-local addresses (tests and local development only: it lets tenants reach this network)")
	f.StringVar(&p.caFile, "push-ca-file", "", "PEM certificates to trust, beside the system's roots, for push handlers' certificates (e.g. a local receiver's self-signed one)")
}

// rootCAs is the pool handlers' certificates are verified against: nil
// (the system's roots) without --push-ca-file, else the system's roots
// and the file's certificates.
func (p *pushFlags) rootCAs() (*x509.CertPool, error) {
	if p.caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(p.caFile)
	if err != nil {
		return nil, fmt.Errorf("--push-ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--push-ca-file: %s holds no PEM certificate", p.caFile)
	}
	return pool, nil
}

// args are the flags again, for a shard process a dev cluster starts.
func (p *pushFlags) args() []string {
	var out []string
	if p.allowPrivate {
		out = append(out, "--push-allow-private")
	}
	if p.caFile != "" {
		// The process may run elsewhere than where the flag was typed.
		abs, err := filepath.Abs(p.caFile)
		if err != nil {
			abs = p.caFile
		}
		out = append(out, "--push-ca-file", abs)
	}
	return out
}
