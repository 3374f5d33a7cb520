package gateway

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/gateway/sso"
	"github.com/jobbie/jobbie/internal/outbound"
)

// newSSO builds the console's sign-in through tenants' identity
// providers, its calls under the egress guard: none for a self-hosted
// node's local API, which has no control to keep the configurations.
func (s *Server) newSSO() (*sso.RP, error) {
	cfg := s.cfg
	if cfg.Local != nil {
		return nil, nil
	}
	out, err := outbound.New(outbound.Config{AllowPrivate: cfg.SSOAllowPrivate, RootCAs: cfg.SSORootCAs,
		MaxBody: 1 << 20, PerTenant: 8, FailFast: true, Timeout: 15 * time.Second})
	if err != nil {
		return nil, err
	}
	s.ssoOut = out
	return sso.New(sso.Config{Control: s.control, Outbound: out, Clock: cfg.Clock, Logger: cfg.Logger})
}

// checkConsolePublicURL checks Config.ConsolePublicURL: empty, or an
// http(s) URL of a host and nothing else.
func checkConsolePublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("gateway: ConsolePublicURL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("gateway: ConsolePublicURL %q is not an http:// or https:// URL with a host", s)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return errors.New("gateway: ConsolePublicURL has a path, query, fragment or user: only scheme, host and port")
	}
	return nil
}
