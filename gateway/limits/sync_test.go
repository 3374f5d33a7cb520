package limits

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// syncedGateway is the rate-limit side of one gateway, without a network:
// tests carry the reports between them.
type syncedGateway struct {
	name string
	rs   *rateSync
	pc   *Plans
	e    *planEntry
}

func newSyncedGateway(t *testing.T, name string, clk clockwork.Clock, lim wire.PlanLimits) *syncedGateway {
	t.Helper()
	rs := newTestRateSync(t, name, clk)
	pc := &Plans{clock: clk, rates: rs}
	e := &planEntry{tid: tenantA}
	e.plan.Store(&cachedPlan{tp: wire.TenantPlan{Plan: wire.Plan{Name: "pro", Limits: lim}}})
	pc.entries.Store(tenantA, e)
	pc.applyLimits(e, clk.Now())
	require.NotNil(t, e.rates.Load())
	return &syncedGateway{name: name, rs: rs, pc: pc, e: e}
}

// offer asks n requests of the gateway's rps limit at now, and returns
// how many passed.
func (g *syncedGateway) offer(now time.Time, n int) int {
	passed := 0
	for range n {
		if ok, _, _, _ := g.e.rates.Load().rps.take(now, 1); ok {
			passed++
		}
	}
	return passed
}

func (g *syncedGateway) share() float64 {
	l := g.e.rates.Load().rps
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.rate
}

// exchange runs one sync on every gateway and hands each one's report to
// the others, as gossip does.
func exchange(gws ...*syncedGateway) {
	reports := make([][]demandReport, len(gws))
	for i, g := range gws {
		reports[i] = g.rs.tick(g.pc)
	}
	for i, g := range gws {
		for _, msg := range sealed(g.name, g.rs, reports[i]) {
			for _, other := range gws {
				if other != g {
					other.rs.receive(g.name, msg)
				}
			}
		}
	}
}

// testCAs is one CA per test binary: every syncedGateway's certificate
// comes from it, as a deployment's gateways' do.
var testCAs sync.Map // *testing.T's name → *pkitest.CA

func testCA(t *testing.T) *pkitest.CA {
	root := strings.SplitN(t.Name(), "/", 2)[0]
	if ca, ok := testCAs.Load(root); ok {
		return ca.(*pkitest.CA)
	}
	ca, _ := testCAs.LoadOrStore(root, pkitest.New(t))
	return ca.(*pkitest.CA)
}

// newTestRateSync is a gateway's rate sync without a pool, with a
// gateway certificate from the test's CA.
func newTestRateSync(t *testing.T, name string, clk clockwork.Clock) *rateSync {
	creds := testCA(t).Creds(t, pki.Identity{Role: pki.RoleGateway, Node: name})
	return newRateSync(Config{Clock: clk, Logger: slog.New(slog.DiscardHandler), RateLimitSyncInterval: 250 * time.Millisecond, TLS: creds})
}

// sealed is report as the gateway named from sends it.
func sealed(from string, rs *rateSync, report []demandReport) [][]byte {
	var msgs [][]byte
	for _, body := range encodeDemand(report, 1200) {
		rs.lastSent++
		msg, err := rs.signer.seal(from, rs.lastSent, body)
		if err != nil {
			panic(err)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// run drives the gateways for d on clk, offering each its rate (per
// second) in steps of 10 ms and syncing every 250 ms, and returns what
// each admitted.
func run(clk *clockwork.FakeClock, d time.Duration, gws []*syncedGateway, rates []float64) []int {
	admitted := make([]int, len(gws))
	owed := make([]float64, len(gws))
	for step := time.Duration(0); step < d; step += 10 * time.Millisecond {
		clk.Advance(10 * time.Millisecond)
		for i, g := range gws {
			owed[i] += rates[i] / 100
			n := int(owed[i])
			owed[i] -= float64(n)
			admitted[i] += g.offer(clk.Now(), n)
		}
		if (step+10*time.Millisecond)%(250*time.Millisecond) == 0 {
			exchange(gws...)
		}
	}
	return admitted
}

func rps(v int64) wire.PlanLimits { return wire.PlanLimits{RequestsPerSecond: &v} }

const tenantA = "t_01hx7y2k3m0000000000000000"

func TestGatewaysDivideALimitByDemandSoTheSumIsTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offers []float64
	}{
		{"even", []float64{200, 200}},
		{"80/20", []float64{320, 80}},
		{"one idle", []float64{400, 0}},
		{"three gateways", []float64{300, 60, 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clockwork.NewFakeClockAt(bucketT0)
			var gws []*syncedGateway
			for i := range tc.offers {
				gws = append(gws, newSyncedGateway(t, "gw"+string(rune('a'+i)), clk, rps(200)))
			}
			run(clk, 2*time.Second, gws, tc.offers) // warm-up: buckets drain, demands are known
			admitted := run(clk, 10*time.Second, gws, tc.offers)
			total, shares := 0, 0.0
			for i, g := range gws {
				total += admitted[i]
				if tc.offers[i] > 0 { // an idle one holds a standby sliver, unused
					shares += g.share()
				}
			}
			require.InDelta(t, 200, shares, 0.5, "the shares of the gateways with demand add up to the limit")
			require.InDelta(t, 2000, total, 2000*0.02, "admitted over 10 s: %v", admitted)
			for i, g := range gws {
				if tc.offers[i] > 0 {
					require.Greater(t, admitted[i], 0, "gateway %s with demand admits some", g.name)
				}
			}
		})
	}
}

func TestASilentGatewaysShareReturnsToTheOthers(t *testing.T) {
	clk := clockwork.NewFakeClockAt(bucketT0)
	a := newSyncedGateway(t, "gwa", clk, rps(200))
	b := newSyncedGateway(t, "gwb", clk, rps(200))
	run(clk, 2*time.Second, []*syncedGateway{a, b}, []float64{300, 300})
	require.InDelta(t, 100, a.share(), 1)

	// b stops: a keeps counting its last report for eight intervals.
	for range peerReportsValid {
		clk.Advance(250 * time.Millisecond)
		a.offer(clk.Now(), 75)
		a.rs.tick(a.pc)
		require.Less(t, a.share(), 150.0)
	}
	clk.Advance(250 * time.Millisecond)
	a.offer(clk.Now(), 75)
	a.rs.tick(a.pc)
	require.InDelta(t, 200, a.share(), 0.01, "alone again, a takes the whole limit")
}

func TestANewGatewayStartsFromItsShareGivenTheOthersDemand(t *testing.T) {
	clk := clockwork.NewFakeClockAt(bucketT0)
	a := newSyncedGateway(t, "gwa", clk, rps(200))
	run(clk, time.Second, []*syncedGateway{a}, []float64{400})
	b := &syncedGateway{name: "gwb"}
	b.rs = newTestRateSync(t, "gwb", clk)
	for _, msg := range sealed("gwa", a.rs, a.rs.tick(a.pc)) {
		b.rs.receive("gwa", msg)
	}
	tr := b.rs.limitsFor(tenantA, rps(200), nil, clk.Now())
	// 200 × (0 + 10) / (400 + 10 + 0 + 10): a sliver, until its demand is known.
	require.InDelta(t, 200*10/420.0, tr.rps.b.rate, 0.5)
}

func TestLimitsForKeepsUnchangedLimitersAndTheDemandOfChangedOnes(t *testing.T) {
	clk := clockwork.NewFakeClockAt(bucketT0)
	rs := newRateSync(Config{Clock: clk, Logger: slog.New(slog.DiscardHandler), RateLimitSyncInterval: 250 * time.Millisecond})
	require.Nil(t, rs.limitsFor(tenantA, wire.PlanLimits{}, nil, clk.Now()), "no rate limits, nothing on the hot path")
	five, ten := int64(5), int64(10)
	tr := rs.limitsFor(tenantA, wire.PlanLimits{RequestsPerSecond: &five, EnqueuesPerSecond: &ten}, nil, clk.Now())
	require.Equal(t, `"rps";q=5;w=1, "eps";q=10;w=1`, tr.policy)
	same := rs.limitsFor(tenantA, wire.PlanLimits{RequestsPerSecond: &five, EnqueuesPerSecond: &ten}, tr, clk.Now())
	require.Same(t, tr, same)

	tr.rps.take(clk.Now(), 3)
	changed := rs.limitsFor(tenantA, wire.PlanLimits{RequestsPerSecond: &ten, EnqueuesPerSecond: &ten}, tr, clk.Now())
	require.NotSame(t, tr, changed)
	require.Same(t, tr.eps, changed.eps, "the unchanged limit keeps its bucket")
	require.InDelta(t, 3, changed.rps.demand.seen, 0, "the changed one keeps its demand")
	require.Equal(t, `"rps";q=10;w=1, "eps";q=10;w=1`, changed.policy)
	require.Nil(t, rs.limitsFor(tenantA, wire.PlanLimits{}, changed, clk.Now()))
}

func TestDemandReportsRoundTripInPacketsAndRefuseGarbage(t *testing.T) {
	var report []demandReport
	for i := range 100 {
		report = append(report, demandReport{tid: "t_01hx7y2k3m00000000000000" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			rps: float64(i) * 1.25, eps: float64(i) / 3})
	}
	msgs := encodeDemand(report, 1200)
	require.Greater(t, len(msgs), 2)
	var back []demandReport
	for _, m := range msgs {
		require.LessOrEqual(t, len(m), 1200)
		got, ok := decodeDemand(m)
		require.True(t, ok)
		back = append(back, got...)
	}
	require.Len(t, back, len(report))
	for i := range report {
		require.Equal(t, report[i].tid, back[i].tid)
		require.InDelta(t, report[i].rps, back[i].rps, 0.005)
		require.InDelta(t, report[i].eps, back[i].eps, 0.005)
	}
	for _, bad := range [][]byte{nil, {2}, {bodyVersion, 200}, {bodyVersion, 1, 'x'}, {bodyVersion, 1, 'x', 5},
		append([]byte{bodyVersion, 0xff, 0xff, 0xff, 0xff, 0x0f}, strings.Repeat("x", 10)...)} {
		_, ok := decodeDemand(bad)
		require.False(t, ok, "%v", bad)
	}
}
