package roles

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/gateway"
)

// ssoFlags are the operator's switches of console sign-in through
// tenants' identity providers, the same on `jobbie dev` and `jobbie
// gateway`: private providers, extra CAs to trust for their
// certificates, the address browsers reach the gateway at, and the rate
// of sign-ins.
type ssoFlags struct {
	allowPrivate bool
	caFile       string
	publicURL    string
	// perAddr and perTenant are sign-in steps a minute; 0: no limit.
	perAddr, perTenant int
}

// The sign-in rates' defaults (gateway.Config's).
const (
	defaultSignInsPerAddress = 30
	defaultSignInsPerTenant  = 600
)

func (s *ssoFlags) flags(f *pflag.FlagSet) {
	f.BoolVar(&s.allowPrivate, "sso-allow-private", false, "let console sign-in reach tenants' identity providers on loopback, private and link-local addresses (tests and local development only: it lets tenants reach this network)")
	f.StringVar(&s.caFile, "sso-ca-file", "", "PEM certificates to trust, beside the system's roots, for identity providers' certificates (e.g. a local provider's self-signed one)")
	f.IntVar(&s.perAddr, "sso-signins-per-address", defaultSignInsPerAddress, "console sign-in steps through an identity provider (a start or a callback) a minute from one client address (an IPv6 one per /64); past it 429 (0: no limit)")
	f.IntVar(&s.perTenant, "sso-signins-per-tenant", defaultSignInsPerTenant, "console sign-in steps through an identity provider a minute for one tenant, over every address; past it 429 (0: no limit)")
	settings.Range(f, "sso-signins-per-address", "0", "")
	settings.Range(f, "sso-signins-per-tenant", "0", "")
	f.StringVar(&s.publicURL, "console-public-url", "", "the gateway's address as browsers reach it, e.g. https://jobs.example.com: identity providers send people back to its /console/api/sso/callback (default: each request's own scheme and host)")
}

// apply sets the switches on cfg.
func (s *ssoFlags) apply(cfg *gateway.Config) error {
	cfg.SSOAllowPrivate, cfg.ConsolePublicURL = s.allowPrivate, s.publicURL
	for _, r := range []struct {
		n  int
		to *int
	}{{s.perAddr, &cfg.SSOSignInsPerAddress}, {s.perTenant, &cfg.SSOSignInsPerTenant}} {
		*r.to = r.n
		if r.n <= 0 { // settings.Range refused a negative one
			*r.to = -1 // the gateway's "no limit"; its 0 is the default
		}
	}
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
	if s.perAddr != defaultSignInsPerAddress {
		out = append(out, "--sso-signins-per-address", strconv.Itoa(s.perAddr))
	}
	if s.perTenant != defaultSignInsPerTenant {
		out = append(out, "--sso-signins-per-tenant", strconv.Itoa(s.perTenant))
	}
	return out
}
