package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/wire"
)

// info serves GET /api/v1/info, what a client may learn before it calls:
// where the gRPC port is, so that a worker finds the stream on its own.
// Public: it says nothing of any tenant.
var info serve = func(s *Server, c *fiber.Ctx, _ *admitted.Request) error {
	c.Set(fiber.HeaderCacheControl, "no-store") // it may name the host asked for
	return c.JSON(wire.GatewayInfo{GRPCURL: s.grpcPublicURL(c.Hostname())})
}

// grpcPublicURL is Config.GRPCPublicURL, or else the gRPC listener's
// address as a URL, with asked (the request's Host) in place of an
// unspecified host; "" without a gRPC listener.
func (s *Server) grpcPublicURL(asked string) string {
	if s.cfg.GRPCPublicURL != "" {
		return s.cfg.GRPCPublicURL
	}
	s.mu.Lock()
	ln, tls := s.grpcLn, s.grpcTLS
	s.mu.Unlock()
	if ln == nil {
		return ""
	}
	host, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return ""
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = hostOnly(asked)
	}
	if host == "" {
		return ""
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// hostOnly is a Host header's host, without its port or brackets.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.Trim(h, "[]")
}

// checkGRPCPublicURL checks Config.GRPCPublicURL: empty, or an http or
// https URL with a host and nothing after it but a path.
func checkGRPCPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("gateway: GRPCPublicURL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("gateway: GRPCPublicURL %q is not an http:// or https:// URL with a host", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return errors.New("gateway: GRPCPublicURL has a query, fragment or user: only scheme, host, port and path")
	}
	return nil
}
