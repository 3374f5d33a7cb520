package limits

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// huge is a forger's claim of demand for tenantA: taken, it would shrink
// every real gateway's share of a 200/s limit to a hundredth of a request.
var huge = []demandReport{{tid: tenantA, rps: 1e6}}

// alone is a gateway's share of a 200/s limit with no demand of its own
// and no peer's: the whole limit.
const alone = 200.0

func shareOf(rs *rateSync) float64 { return rs.share(tenantA, policyRequests, 200, 0, time.Now()) }

func TestDemandIsTakenOnlySignedByAGatewayForItsSenderAndOnce(t *testing.T) {
	ca := pkitest.New(t)
	clk := clockwork.NewRealClock()
	rs := newRateSync(Config{Clock: clk, Logger: slog.New(slog.DiscardHandler), RateLimitSyncInterval: time.Hour,
		TLS: ca.Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-1"})})
	seal := func(creds *pki.Credentials, from string, seq uint64, body []byte) []byte {
		msg, err := newDemandSigner(creds).seal(from, seq, body)
		require.NoError(t, err)
		return msg
	}
	body := encodeDemand(huge, 1200)[0]
	gw2 := ca.Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-2"})

	refused := map[string][]byte{
		"unsigned, as gateways sent before":    body,
		"a gateway of another CA":              seal(pkitest.New(t).Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-2"}), "gw-2", 1, body),
		"a shard of the CA":                    seal(ca.Creds(t, pkitest.Shard("s1", "n1")), "gw-2", 1, body),
		"a tenant's own shard node":            seal(ca.Creds(t, pkitest.TenantShard("s1", "n1", tenantA)), "gw-2", 1, body),
		"the control plane":                    seal(ca.Creds(t, pki.Identity{Role: pki.RoleControl, Node: "c1"}), "gw-2", 1, body),
		"signed for another sender":            seal(gw2, "gw-3", 1, body),
		"garbage":                              {envelopeVersion, 0xff, 0xff, 0xff, 0xff, 0xff},
		"empty":                                nil,
		"a body altered after it was signed":   tampered(seal(gw2, "gw-2", 1, encodeDemand([]demandReport{{tid: tenantA, rps: 1}}, 1200)[0])),
		"a signature of another purpose (TLS)": resealed(t, gw2, "gw-2", body),
	}
	for what, msg := range refused {
		before := testutilCount(demandRefused)
		rs.receive("gw-2", msg)
		require.Equal(t, before+1, testutilCount(demandRefused), what)
		require.InDelta(t, alone, shareOf(rs), 0.01, "%s: not taken", what)
		rs.expire(time.Now()) // a fresh interval's budget of checks
	}

	// A gateway's own report is taken; the same again, or an older one
	// of its, is not.
	first := seal(gw2, "gw-2", 10, encodeDemand([]demandReport{{tid: tenantA, rps: 190}}, 1200)[0])
	rs.receive("gw-2", first)
	taken := shareOf(rs)
	require.InDelta(t, 200*10/(10+190+10.0), taken, 0.01, "the gateway's demand is counted")
	for what, msg := range map[string][]byte{
		"the same report replayed": first,
		"an older report":          seal(gw2, "gw-2", 9, body),
	} {
		rs.receive("gw-2", msg)
		require.InDelta(t, taken, shareOf(rs), 0.01, what)
	}
	rs.receive("gw-2", seal(gw2, "gw-2", 11, encodeDemand([]demandReport{{tid: tenantA, rps: 90}}, 1200)[0]))
	require.InDelta(t, 200*10/(10+90+10.0), shareOf(rs), 0.01, "a newer report replaces it")
}

// Unknown certificates cost a chain check each: past the interval's
// budget a flood of them is dropped unread, until the next interval.
func TestAFloodOfForgeriesIsCheckedAtMostABudgetAnInterval(t *testing.T) {
	ca := pkitest.New(t)
	rs := newRateSync(Config{Clock: clockwork.NewRealClock(), Logger: slog.New(slog.DiscardHandler), RateLimitSyncInterval: time.Hour,
		TLS: ca.Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-1"})})
	other := pkitest.New(t).Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-2"})
	forged, err := newDemandSigner(other).seal("gw-2", 1, encodeDemand(huge, 1200)[0])
	require.NoError(t, err)
	for range 3 * badSignersPerInterval {
		rs.receive("gw-2", forged)
	}
	require.Equal(t, badSignersPerInterval, rs.signer.failures, "checks stop at the budget")
	rs.expire(time.Now())
	require.Zero(t, rs.signer.failures, "a new interval, a new budget")
}

// Over real gossip: a member holding the pool's key that claims to be a
// gateway floods every form of forged demand for a tenant; the real
// gateway keeps its whole limit, and still takes a real gateway's report
// sent after the forgeries.
func TestForgedDemandOverGossipDoesNotThrottleATenant(t *testing.T) {
	ca := pkitest.New(t)
	pools := joinedGatewayPools(t, "gw-1", "gw-2", "gw-evil")
	creds := ca.Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-1"})
	rs := newRateSync(Config{Gossip: pools[0], TLS: creds, Clock: clockwork.NewRealClock(),
		Logger: slog.New(slog.DiscardHandler), RateLimitSyncInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rs.run(ctx, &Plans{clock: rs.clock, rates: rs}) }()
	t.Cleanup(func() { cancel(); <-done })

	gw1 := member(t, pools[2], "gw-1")
	body := encodeDemand(huge, 1200)[0]
	shard := ca.Creds(t, pkitest.Shard("s1", "n1"))
	stranger := pkitest.New(t).Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-evil"})
	forgeries := [][]byte{body, mustSeal(t, shard, "gw-evil", 1, body), mustSeal(t, stranger, "gw-evil", 1, body)}
	before := testutilCount(demandRefused)
	waitFor(t, "the forgeries to be judged", func() bool {
		for _, msg := range forgeries { // again each round: a datagram may be lost
			require.NoError(t, pools[2].Send(gw1, gossip.KindRateDemand, msg))
		}
		return testutilCount(demandRefused) >= before+float64(len(forgeries))
	})
	require.InDelta(t, alone, shareOf(rs), 0.01, "forged demand of 1e6/s would leave %.3f", 200*10/(1e6+200.0))

	// A real gateway's report over the same pool is taken.
	real := mustSeal(t, ca.Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "gw-2"}), "gw-2", 1,
		encodeDemand([]demandReport{{tid: tenantA, rps: 190}}, 1200)[0])
	want := 200 * 10 / (10 + 190 + 10.0)
	waitFor(t, "the real gateway's report to be taken", func() bool {
		require.NoError(t, pools[1].Send(member(t, pools[1], "gw-1"), gossip.KindRateDemand, real))
		return shareOf(rs) < want+0.01
	})
	require.InDelta(t, want, shareOf(rs), 0.01)
}

// waitFor tries cond every 20 ms (each try may send a datagram again)
// until it holds, for at most 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited 20 s for %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}

func testutilCount(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func mustSeal(t *testing.T, creds *pki.Credentials, from string, seq uint64, body []byte) []byte {
	t.Helper()
	msg, err := newDemandSigner(creds).seal(from, seq, body)
	require.NoError(t, err)
	return msg
}

// tampered is msg with its last byte (a demand's) changed.
func tampered(msg []byte) []byte {
	out := bytes.Clone(msg)
	out[len(out)-1]++
	return out
}

// resealed is a message whose signature is gw's over the same bytes for
// another purpose: a signature made elsewhere is no good here.
func resealed(t *testing.T, gw *pki.Credentials, from string, body []byte) []byte {
	msg := mustSeal(t, gw, from, 1, body)
	_, sig, err := gw.Sign("another purpose", signedDemand(from, 1, body))
	require.NoError(t, err)
	cert, rest, _ := chunk(msg[1:], 1<<16)
	_, rest, _ = chunk(rest, maxSigLen)
	out := []byte{envelopeVersion}
	out = appendChunk(out, cert)
	out = appendChunk(out, sig)
	return append(out, rest...)
}

func member(t *testing.T, p *gossip.Pool, name string) gossip.Member {
	for _, m := range p.Members() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("%s does not see %s", p.Name(), name)
	return gossip.Member{}
}

// joinedGatewayPools starts members of one gossip pool, each announcing
// itself a gateway, and waits until each sees them all.
func joinedGatewayPools(t *testing.T, names ...string) []*gossip.Pool {
	key := bytes.Repeat([]byte{7}, 32)
	var pools []*gossip.Pool
	for i, name := range names {
		cfg := gossip.Config{NodeName: name, BindAddr: "127.0.0.1:0", Fast: true, Keys: [][]byte{key},
			Meta: gossip.Meta{Role: gossip.RoleGateway, Version: "test"}}
		if i > 0 {
			cfg.Join = []string{pools[0].Addr()}
		}
		p, err := gossip.New(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Shutdown() })
		pools = append(pools, p)
	}
	for _, p := range pools {
		ch, cancel := p.Subscribe()
		for p.NumMembers() < len(names) {
			select {
			case <-ch:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s sees %d members of %d", p.Name(), p.NumMembers(), len(names))
			}
		}
		cancel()
	}
	return pools
}

// FuzzDemandDatagram: whatever a holder of the pool's key sends as
// demand, the receiving gateway neither crashes nor changes any share.
// Seeds: a gateway's real report (valid, but signed for another sender,
// so also refused), and its parts.
func FuzzDemandDatagram(f *testing.F) {
	ca := pkitest.New(f)
	gw2 := ca.Creds(f, pki.Identity{Role: pki.RoleGateway, Node: "gw-2"})
	real, err := newDemandSigner(gw2).seal("gw-2", 1, encodeDemand(huge, 1200)[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	f.Add(real[:len(real)/2])
	f.Add(encodeDemand(huge, 1200)[0])
	f.Add([]byte{envelopeVersion})
	f.Add([]byte{})
	rs := newRateSync(Config{Clock: clockwork.NewRealClock(), Logger: slog.New(slog.DiscardHandler), RateLimitSyncInterval: time.Hour,
		TLS: ca.Creds(f, pki.Identity{Role: pki.RoleGateway, Node: "gw-1"})})
	f.Fuzz(func(t *testing.T, msg []byte) {
		rs.receive("gw-evil", msg)
		rs.expire(time.Now())
		if got := shareOf(rs); got != alone {
			t.Fatalf("a datagram changed the share to %v", got)
		}
	})
}
