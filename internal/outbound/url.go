package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ErrBadURL is wrapped by every error CheckURL and CheckAllowList return.
var ErrBadURL = errors.New("outbound: URL not allowed")

// MaxURLBytes bounds a target URL.
const MaxURLBytes = 2048

// CheckURL holds a tenant's target URL to what Jobbie will call: https,
// a host (a DNS name or an IP literal), no userinfo, port 443 or 1024 and
// above (the well-known ports below hold other services: SSH, SMTP,
// databases), and, when allow is not empty, a host the allow-list
// matches (see HostAllowed). It does not resolve the name: Client.Check
// does that too. Its errors wrap ErrBadURL and say what is wrong.
func CheckURL(raw string, allow []string) error {
	u, err := parseURL(raw)
	if err != nil {
		return err
	}
	if len(allow) > 0 && !HostAllowed(u.Hostname(), allow) {
		return fmt.Errorf("%w: host %q is not in the namespace's egress allow-list", ErrBadURL, u.Hostname())
	}
	return nil
}

func parseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadURL)
	}
	if len(raw) > MaxURLBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadURL, MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	switch {
	case u.Scheme != "https":
		return nil, fmt.Errorf("%w: scheme %q: only https is allowed", ErrBadURL, u.Scheme)
	case u.Opaque != "":
		return nil, fmt.Errorf("%w: not an absolute https://host/path URL", ErrBadURL)
	case u.User != nil:
		return nil, fmt.Errorf("%w: user information (user:password@) is not allowed", ErrBadURL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: no host", ErrBadURL)
	}
	if err := checkHost(u.Hostname()); err != nil {
		return nil, err
	}
	if err := checkPort(u.Port()); err != nil {
		return nil, err
	}
	return u, nil
}

func checkHost(host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return fmt.Errorf("%w: host %q has an IPv6 zone", ErrBadURL, host)
		}
		return nil
	}
	if !validName(host) {
		return fmt.Errorf("%w: host %q is not a valid DNS name", ErrBadURL, host)
	}
	return nil
}

// validName reports a DNS host name: dot-separated labels of letters,
// digits and hyphens (and underscores, which some real hosts use), none
// empty, none over 63 bytes, not starting or ending with a hyphen.
func validName(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func checkPort(port string) error {
	if port == "" {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: port %q is not a port number", ErrBadURL, port)
	}
	if n != 443 && n < 1024 {
		return fmt.Errorf("%w: port %d: only 443 and ports from 1024 are allowed", ErrBadURL, n)
	}
	return nil
}

// CheckAllowList validates an egress allow-list: each entry a host name
// ("api.example.com"), a pattern of its subdomains ("*.example.com") or
// an IP literal.
func CheckAllowList(allow []string) error {
	for i, e := range allow {
		name := strings.TrimPrefix(e, "*.")
		if _, err := netip.ParseAddr(e); err == nil {
			continue
		}
		if strings.Contains(name, "*") || !validName(name) {
			return fmt.Errorf("%w: allow-list entry %d (%q) is not a host name, *.domain pattern or IP address", ErrBadURL, i, e)
		}
	}
	return nil
}

// HostAllowed reports whether host matches the allow-list: an entry
// equal to it (case and a trailing dot aside), or "*.domain" when host is
// a subdomain of domain at any depth (not domain itself).
func HostAllowed(host string, allow []string) bool {
	host = canonicalHost(host)
	for _, e := range allow {
		e = canonicalHost(e)
		if suffix, ok := strings.CutPrefix(e, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == e {
			return true
		}
	}
	return false
}

func canonicalHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return a.String()
	}
	return h
}
