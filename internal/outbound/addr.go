package outbound

import "net/netip"

// A refused range and why: the reason appears in the error a tenant sees.
type refusedRange struct {
	prefix netip.Prefix
	reason string
}

// refused4 are the IPv4 ranges that are not the public internet
// (RFC 6890's special-purpose registry, the parts that matter).
var refused4 = ranges(
	"0.0.0.0/8", "unspecified (this network)",
	"10.0.0.0/8", "private (RFC 1918)",
	"100.64.0.0/10", "carrier-grade NAT (RFC 6598)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local (cloud metadata lives here)",
	"172.16.0.0/12", "private (RFC 1918)",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.2.0/24", "documentation (TEST-NET-1)",
	"192.88.99.0/24", "6to4 relay anycast",
	"192.168.0.0/16", "private (RFC 1918)",
	"198.18.0.0/15", "benchmarking (RFC 2544)",
	"198.51.100.0/24", "documentation (TEST-NET-2)",
	"203.0.113.0/24", "documentation (TEST-NET-3)",
	"224.0.0.0/4", "multicast",
	"240.0.0.0/4", "reserved (and broadcast)",
)

// refused6 are the IPv6 ranges that are not the public internet, or that
// wrap an IPv4 address in a way this check does not follow.
var refused6 = ranges(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible (deprecated)",
	"64:ff9b:1::/48", "local-use NAT64",
	"100::/64", "discard-only",
	"2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID)",
	"2001:db8::/32", "documentation",
	"fc00::/7", "unique local (private)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func ranges(pairs ...string) []refusedRange {
	out := make([]refusedRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, refusedRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// RefusedReason says why a is not a public internet address ("loopback",
// "private (RFC 1918)", ...), or "" when Jobbie may call it. IPv4 wrapped
// in IPv6 (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4
// 2002::/16) is judged by the IPv4 address inside.
func RefusedReason(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		return refused4Reason(a.Unmap(), "IPv4-mapped ")
	}
	if a.Is4() {
		return refused4Reason(a, "")
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return refused4Reason(netip.AddrFrom4([4]byte(b[12:16])), "NAT64 of ")
	case sixToFour.Contains(a):
		return refused4Reason(netip.AddrFrom4([4]byte(b[2:6])), "6to4 of ")
	}
	for _, r := range refused6 {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if !a.IsGlobalUnicast() {
		return "not a global unicast address"
	}
	return ""
}

func refused4Reason(a netip.Addr, wrap string) string {
	for _, r := range refused4 {
		if r.prefix.Contains(a) {
			return wrap + r.reason
		}
	}
	if !a.IsGlobalUnicast() {
		return wrap + "not a global unicast address"
	}
	return ""
}
