package limits

import (
	"net/netip"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
)

// A flood of sign-in steps from one address is refused past its rate
// with Retry-After, while another address still passes; the bucket
// refills with time.
func TestSignInsPerAddress(t *testing.T) {
	clk := clockwork.NewFakeClock()
	s := NewSignIns(3, 0, clk)
	a, b := listen.AddrKey(netip.MustParseAddr("192.0.2.1")), listen.AddrKey(netip.MustParseAddr("192.0.2.2"))
	for range 3 {
		require.NoError(t, s.allow(a, "acme"))
	}
	err := apierr.From(s.allow(a, "acme"))
	require.Equal(t, apierr.RateLimited, err.Code)
	require.Equal(t, 20, err.RetryAfter) // 3 a minute: one every 20s
	require.Contains(t, err.Message, "192.0.2.1")
	require.NoError(t, s.allow(b, "acme"), "another address has its own bucket")
	clk.Advance(20 * time.Second)
	require.NoError(t, s.allow(a, "acme"))
}

// A tenant's steps are limited over every address; a refusal by the
// tenant's limit gives the address its token back.
func TestSignInsPerTenant(t *testing.T) {
	clk := clockwork.NewFakeClock()
	s := NewSignIns(2, 2, clk)
	addr := func(i int) netip.Prefix { return listen.AddrKey(netip.AddrFrom4([4]byte{198, 51, 100, byte(i)})) }
	require.NoError(t, s.allow(addr(1), "acme"))
	require.NoError(t, s.allow(addr(2), "acme"))
	err := apierr.From(s.allow(addr(1), "acme"))
	require.Equal(t, apierr.RateLimited, err.Code)
	require.Contains(t, err.Message, "this tenant")
	require.NoError(t, s.allow(addr(1), "other"), "another tenant; the refused step took nothing from the address")
	err = apierr.From(s.allow(addr(1), ""))
	require.Equal(t, apierr.RateLimited, err.Code, "the address has used its two")
	require.Contains(t, err.Message, "per address")
}
