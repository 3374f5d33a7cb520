package roles

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/gateway"
)

// ssoFlags are the operator's switches of console sign-in through
// tenants' identity providers, the same on `jobbie dev` and `jobbie
// gateway`: private providers, extra CAs to trust for their
// certificates, and the address browsers reach the gateway at.
type ssoFlags struct {
	allowPrivate bool
	caFile       string
	publicURL    string
}

func (s *ssoFlags) flags(f *pflag.FlagSet) {
	f.BoolVar(&s.allowPrivate, "sso-allow-private", false, "let console sign-in reach tenants' identity providers on loopback, private and link-local addresses (tests and local development only: it lets tenants reach this network)")
	f.StringVar(&s.caFile, "sso-ca-file", "", "PEM certificates to trust, beside the system's roots, for identity providers' certificates (e.g. a local provider's self-signed one)")
	f.StringVar(&s.publicURL, "console-public-url", "", "the gateway's address as browsers reach it, e.g. https://jobs.example.com: identity providers send people back to its /console/api/sso/callback (default: each request's own scheme and host)")
}

// apply sets the switches on cfg.
func (s *ssoFlags) apply(cfg *gateway.Config) error {
	cfg.SSOAllowPrivate, cfg.ConsolePublicURL = s.allowPrivate, s.publicURL
	if s.caFile == "" {
		return nil
	}
	pem, err := os.ReadFile(s.caFile)
	if err != nil {
		return fmt.Errorf("--sso-ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("--sso-ca-file: %s holds no PEM certificate", s.caFile)
	}
	cfg.SSORootCAs = pool
	return nil
}

// args are the flags again, for the gateway process a dev cluster starts.
func (s *ssoFlags) args() []string {
	var out []string
	if s.allowPrivate {
		out = append(out, "--sso-allow-private")
	}
	if s.caFile != "" {
		abs, err := filepath.Abs(s.caFile) // the process may run elsewhere than where the flag was typed
		if err != nil {
			abs = s.caFile
		}
		out = append(out, "--sso-ca-file", abs)
	}
	if s.publicURL != "" {
		out = append(out, "--console-public-url", s.publicURL)
	}
	return out
}
