package outbound

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"https://api.example.com/jobs", "https://api.example.com:8443/x?y=1",
		"https://API.Example.COM./x", "https://93.184.216.34/hook", "https://[2606:4700::1111]/hook",
		"https://a_b.example.com/", "https://example.com:443/",
	} {
		require.NoError(t, CheckURL(ok, nil), ok)
	}
	for raw, want := range map[string]string{
		"":                                     "empty",
		"http://api.example.com/":              `scheme "http": only https`,
		"ftp://api.example.com/":               `scheme "ftp"`,
		"api.example.com/jobs":                 `scheme ""`,
		"https:api.example.com":                "not an absolute",
		"https://user:pw@api.example.com/":     "user information",
		"https:///path":                        "no host",
		"https://exa mple.com/":                "invalid character",
		"https://-bad.example.com/":            "not a valid DNS name",
		"https://api.example.com:22/":          "port 22: only 443 and ports from 1024",
		"https://api.example.com:80/":          "port 80",
		"https://api.example.com:99999/":       `port "99999"`,
		"https://[fe80::1%25eth0]/":            "IPv6 zone",
		"https://" + strings.Repeat("a", 2100): "longer than 2048",
	} {
		err := CheckURL(raw, nil)
		require.ErrorIs(t, err, ErrBadURL, raw)
		require.ErrorContains(t, err, want, raw)
	}
}

func TestAllowList(t *testing.T) {
	t.Parallel()
	allow := []string{"hooks.example.com", "*.acme.io", "93.184.216.34"}
	require.NoError(t, CheckAllowList(allow))
	for host, want := range map[string]bool{
		"hooks.example.com": true, "HOOKS.example.com.": true, "api.acme.io": true, "a.b.acme.io": true,
		"acme.io": false, "evilacme.io": false, "example.com": false, "other.example.com": false,
		"93.184.216.34": true, "93.184.216.35": false,
	} {
		require.Equal(t, want, HostAllowed(host, allow), host)
	}
	require.NoError(t, CheckURL("https://api.acme.io/x", allow))
	err := CheckURL("https://evil.example.net/x", allow)
	require.ErrorIs(t, err, ErrBadURL)
	require.ErrorContains(t, err, `host "evil.example.net" is not in the namespace's egress allow-list`)

	for _, bad := range []string{"*", "*.", "a.*.com", "exa mple.com", "", "**.x.com"} {
		err := CheckAllowList([]string{"ok.com", bad})
		require.ErrorIs(t, err, ErrBadURL, bad)
		require.ErrorContains(t, err, "allow-list entry 1", bad)
	}
}

func TestRefusedReason(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1":              "loopback",
		"127.8.9.10":             "loopback",
		"10.0.0.1":               "private",
		"172.16.5.4":             "private",
		"192.168.1.1":            "private",
		"169.254.169.254":        "link-local",
		"100.64.0.1":             "carrier-grade NAT",
		"0.0.0.0":                "unspecified",
		"0.1.2.3":                "unspecified",
		"224.0.0.1":              "multicast",
		"255.255.255.255":        "reserved",
		"192.0.2.10":             "documentation",
		"198.18.0.1":             "benchmarking",
		"::1":                    "loopback",
		"::":                     "unspecified",
		"::ffff:127.0.0.1":       "IPv4-mapped loopback",
		"::ffff:169.254.169.254": "IPv4-mapped link-local",
		"::127.0.0.1":            "IPv4-compatible",
		"64:ff9b::a00:1":         "NAT64 of private",
		"64:ff9b::7f00:1":        "NAT64 of loopback",
		"2002:a9fe:a9fe::1":      "6to4 of link-local",
		"fc00::1":                "unique local",
		"fd12:3456::1":           "unique local",
		"fe80::1":                "link-local",
		"ff02::1":                "multicast",
		"2001:db8::1":            "documentation",
		"2001::1":                "Teredo",
	} {
		got := RefusedReason(netip.MustParseAddr(addr))
		require.Contains(t, got, want, addr)
	}
	for _, public := range []string{"93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1"} {
		require.Empty(t, RefusedReason(netip.MustParseAddr(public)), public)
	}
}

func TestErrorKindsRead(t *testing.T) {
	t.Parallel()
	err := error(&Error{Kind: KindStatus, Host: "h", Status: 503, Body: []byte("busy\xff")})
	var oe *Error
	require.True(t, errors.As(err, &oe))
	require.Equal(t, "outbound: h answered 503 Service Unavailable: busy\uFFFD", err.Error())
	require.Equal(t, "status", oe.Kind.String())
}
