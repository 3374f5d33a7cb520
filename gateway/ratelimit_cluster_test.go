package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// These tests run on the wall clock: they measure rates. Each phase lets
// the buckets drain and the demands settle (warmUp) before it counts, so
// a full bucket at the start (one second of the rate) and the interval
// before two gateways first hear of each other (both take the whole limit
// then) are left out of the figures.
const warmUp = 2 * time.Second

// within asserts a measured rate is the limit ±10 %: at most 10 % over
// it always, and at least 10 % under it while the buckets were drained.
// A bucket fills at its share of the limit only while requests take its
// tokens; full, it loses what flows in. On an oversubscribed machine the
// loaders cannot deliver what they offer and the gateways' process
// itself stops for a second or more at a time: nothing arrives, the
// buckets fill, and the flow falls under the limit with nothing refused
// that could have passed, however many requests arrive in clumps after.
// So the lower bound is held on the steps of the window that began with
// every bucket nearly empty (see drainedSteps), which no bucket can fill
// within, and only when the requests kept the buckets drained for
// minDrained of the window; the limiter cannot be blamed for the rest.
func within(t *testing.T, limit float64, m measured, what string) {
	t.Helper()
	t.Logf("%s: %.1f/s into the buckets against a limit of %.0f (%+.1f %%); %.1f admitted/s of %.1f/s that reached the gateways; "+
		"%.1f/s into them over the %.1f s they were drained",
		what, m.rate, limit, 100*(m.rate-limit)/limit, m.admitted, m.arrived, m.drained, m.drainedSecs)
	require.LessOrEqual(t, m.rate, limit*1.1, "%s: more than the limit flowed into the buckets", what)
	if m.drainedSecs >= minDrained.Seconds() {
		require.GreaterOrEqual(t, m.drained, limit*0.9, "%s: the buckets, drained, filled under the limit", what)
	} else {
		t.Logf("%s: the machine kept the buckets drained for %.1f s only: the lower bound is not held", what, m.drainedSecs)
	}
	// What they let through exceeds that by at most what the buckets
	// held at the start: a second of each gateway's share, so of the
	// limit, spread over the window.
	burst := limit / m.to.Sub(m.from).Seconds()
	require.LessOrEqual(t, m.admitted, m.rate+burst*1.1, "%s: admitted more than the flow and one burst", what)
}

// loader sends one tenant's requests to one gateway at a steady rate,
// open loop (the pace does not wait for answers), and records the answers.
type loader struct {
	t      *testing.T
	url    string
	auth   string
	body   []byte
	client *fasthttp.HostClient
	rate   atomic.Int64 // requests a second

	mu      sync.Mutex
	answers []answer
}

type answer struct {
	sent    time.Time // when the loader sent it: answers' own times move with the test process's delays
	status  int       // 0: not sent, maxInFlight answers outstanding
	limited bool      // carried the RateLimit field
}

const maxInFlight = 32

func newLoader(t *testing.T, gw *Server, key string, rate int64) *loader {
	body, err := json.Marshal(enqueueBody)
	require.NoError(t, err)
	client := &fasthttp.HostClient{Addr: gw.Addr(), MaxConns: maxInFlight, MaxConnWaitTimeout: 30 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	l := &loader{t: t, url: "http://" + gw.Addr() + "/api/v1/enqueue", auth: "Bearer " + key, body: body, client: client}
	l.rate.Store(rate)
	return l
}

// run paces requests until ctx ends, in steps of 5 ms.
func (l *loader) run(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	sem := make(chan struct{}, maxInFlight)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	last, owed := time.Now(), 0.0
	for {
		select {
		case <-ctx.Done():
			for range maxInFlight { // wait for the answers outstanding
				sem <- struct{}{}
			}
			return
		case now := <-tick.C:
			owed += now.Sub(last).Seconds() * float64(l.rate.Load())
			last = now
			for ; owed >= 1; owed-- {
				select {
				case sem <- struct{}{}:
					go func() {
						defer func() { <-sem }()
						l.send(now)
					}()
				default:
					l.mu.Lock()
					l.answers = append(l.answers, answer{sent: now})
					l.mu.Unlock()
				}
			}
		}
	}
}

func (l *loader) send(now time.Time) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(l.url)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.Set(fasthttp.HeaderAuthorization, l.auth)
	req.Header.SetContentType("application/json")
	req.SetBodyRaw(l.body)
	if err := l.client.DoTimeout(req, resp, 30*time.Second); err != nil {
		return // a gateway stopped under the load
	}
	a := answer{sent: now, status: resp.StatusCode(), limited: len(resp.Header.Peek(wire.RateLimitHeader)) > 0}
	l.mu.Lock()
	l.answers = append(l.answers, a)
	l.mu.Unlock()
}

// count is how many requests sent in [from, to) pick picks.
func (l *loader) count(from, to time.Time, pick func(answer) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.answers {
		if !a.sent.Before(from) && a.sent.Before(to) && pick(a) {
			n++
		}
	}
	return n
}

// flowOf is what tenant tid's rps limiter on gw has let through since it
// was made (admitted) and that plus the tokens it holds (flow): what
// flowed into its bucket. Counted where requests are admitted, so unlike
// the clients' figures it does not move with the test process's delays.
func flowOf(gw *Server, tid string) (admitted, flow float64) { return gw.plans.Flow(tid, time.Now()) }

// window measures tenant tid's rate limit on gateways: start marks its
// beginning; rate is what flowed into their buckets a second since,
// admitted what they let through a second, and arrived what reached them
// a second (admitted or refused by the limit). Rate and admitted differ
// by what the buckets held at either end, up to a second of the limit by
// design (a tenant idle for a moment may send a burst), which over a
// window of a few seconds is tens of percent, so rate is the one held to
// the limit: it is the gateways' shares of it, added up.
type window struct {
	gws      []*Server
	tid      string
	start    time.Time
	admitted float64
	flow     float64
	refused  float64
}

func (w *window) sums() (admitted, flow float64) {
	for _, gw := range w.gws {
		a, f := flowOf(gw, w.tid)
		admitted, flow = admitted+a, flow+f
	}
	return admitted, flow
}

func (w *window) mark() {
	w.start = time.Now()
	w.refused = refusedByRateLimit()
	w.admitted, w.flow = w.sums()
}

func (w *window) rate() (rate, admitted, arrived float64) {
	a, f := w.sums()
	refused := refusedByRateLimit()
	secs := time.Since(w.start).Seconds()
	return (f - w.flow) / secs, (a - w.admitted) / secs, (a - w.admitted + refused - w.refused) / secs
}

// refusedByRateLimit is how many requests the process's gateways have
// refused for requests_per_second. Only the measured tenant has a limit
// while these tests run (they are not parallel), so it counts its
// refusals.
func refusedByRateLimit() float64 {
	mfs, err := obs.Registry.Gather()
	if err != nil {
		panic(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != "jobbie_gateway_limited_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "limit" && l.GetValue() == "requests_per_second" {
					v += m.GetCounter().GetValue()
				}
			}
		}
	}
	return v
}

func admittedRate(from, to time.Time, ls ...*loader) float64 {
	n := 0
	for _, l := range ls {
		n += l.count(from, to, func(a answer) bool { return a.status == http.StatusCreated })
	}
	return float64(n) / to.Sub(from).Seconds()
}

// measured is one phase's figures: the window's rates (see window), and
// the flow a second over the drainedSecs the buckets were drained (see
// drainedSteps).
type measured struct {
	rate, admitted, arrived float64
	drained, drainedSecs    float64
	from, to                time.Time
}

// measure waits out warmUp, then measures tenant tid's limit on gws for d.
func measure(d time.Duration, gws []*Server, tid string) measured {
	return measureAfter(warmUp, d, gws, tid)
}

func measureAfter(warm, d time.Duration, gws []*Server, tid string) measured {
	time.Sleep(warm)
	w := &window{gws: gws, tid: tid}
	w.mark()
	drained, secs := w.drainedSteps(d)
	rate, admitted, arrived := w.rate()
	m := measured{rate: rate, admitted: admitted, arrived: arrived, drainedSecs: secs, from: w.start, to: time.Now()}
	if secs > 0 {
		m.drained = drained / secs
	}
	return m
}

const (
	// sampleStep is how often drainedSteps samples the buckets.
	sampleStep = 50 * time.Millisecond
	// maxDrainedStep bounds a step drainedSteps counts: a bucket holds a
	// second of its share, so one nearly empty (drainedTokens) cannot
	// fill within it at a share of more than a few tokens a second.
	maxDrainedStep = 250 * time.Millisecond
	// drainedTokens is what a bucket holds at most to count as nearly
	// empty: under a request or two.
	drainedTokens = 2
	// minDrained is how long the buckets must have been drained in a
	// window for the flow then to be held to the limit from below.
	minDrained = time.Second
)

// drainedSteps samples the window's buckets for d, and sums the flow into
// them and the time over the steps that began with every bucket nearly
// empty and lasted under maxDrainedStep: none of them was full in such a
// step, so what flowed in was their shares, whatever arrived.
func (w *window) drainedSteps(d time.Duration) (flow, secs float64) {
	prevAt, prevFlow, prevDrained := w.sample()
	for time.Since(w.start) < d {
		time.Sleep(sampleStep) // the measurement's pace, not a wait for an event
		at, f, drained := w.sample()
		if step := at.Sub(prevAt); prevDrained && step < maxDrainedStep {
			flow, secs = flow+f-prevFlow, secs+step.Seconds()
		}
		prevAt, prevFlow, prevDrained = at, f, drained
	}
	return flow, secs
}

// sample is what has flowed into the window's buckets by now, and
// whether each holds under drainedTokens.
func (w *window) sample() (now time.Time, flow float64, drained bool) {
	now, drained = time.Now(), true
	for _, gw := range w.gws {
		a, f := gw.plans.Flow(w.tid, now)
		flow += f
		drained = drained && f-a < drainedTokens
	}
	return now, flow, drained
}

// joinedPools starts n gateway members of one gossip pool and waits until
// each sees them all.
func joinedPools(t *testing.T, n int) []*gossip.Pool {
	key := bytes.Repeat([]byte{7}, 32)
	var pools []*gossip.Pool
	for i := range n {
		cfg := gossip.Config{NodeName: fmt.Sprintf("gw-%d", i+1), BindAddr: "127.0.0.1:0", Fast: true, Keys: [][]byte{key},
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
		for p.NumMembers() < n {
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s sees %d members of %d", p.Name(), p.NumMembers(), n)
			}
		}
		cancel()
	}
	return pools
}

// scaled is v times loadScale.
func scaled(v float64) int64 { return int64(v * loadScale) }

// Two gateways in one gossip pool serve one tenant whose plan allows 200
// requests a second (a quarter of all rates under the race detector).
// Offered twice that, split evenly and then 80/20, they admit 200 a
// second between them, ±10 %; when one stops, the other takes the whole
// limit within a few seconds.
func TestTwoGatewaysHoldOneLimitTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("measures rates for 20 s")
	}
	limit := scaled(200)
	b := newBundle(t)
	b.control.SetPlan(tenantA, limited("pro", limit, 0))
	pools := joinedPools(t, 2)
	var gws []*Server
	for _, p := range pools {
		b.start(t, func(c *Config) { c.Gossip = p })
		b.waitReady(t)
		gws = append(gws, b.gw)
	}
	key := b.key(t, tenancy.RoleProducer, "default")
	l1, l2 := newLoader(t, gws[0], key, limit), newLoader(t, gws[1], key, limit)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	first := &window{gws: gws, tid: tenantA}
	first.mark()
	go l1.run(ctx, &wg)
	go l2.run(ctx, &wg)
	defer func() { cancel(); wg.Wait() }()
	L := float64(limit)

	// Meeting the tenant together, neither takes more than an equal part
	// until they have exchanged demand: the first second admits the
	// buckets' burst (a second's worth, on both together) and a second's
	// flow, no more.
	time.Sleep(time.Second)
	_, admitted, _ := first.rate()
	n := admitted * time.Since(first.start).Seconds()
	t.Logf("first second: %.0f admitted, %.0f being a second's burst and a second's flow", n, 2*L)
	require.LessOrEqual(t, n, 2*L*1.1)

	answered := func(what string, from, to time.Time, ls ...*loader) {
		t.Logf("%s: the clients saw %.1f admitted/s", what, admittedRate(from, to, ls...))
	}
	m := measureAfter(warmUp-time.Second, 5*time.Second, gws, tenantA)
	within(t, L, m, fmt.Sprintf("even split, %d + %d offered", limit, limit))
	answered("even split", m.from, m.to, l1, l2)

	l1.rate.Store(scaled(320))
	l2.rate.Store(scaled(80))
	m = measure(5*time.Second, gws, tenantA)
	within(t, L, m, fmt.Sprintf("80/20 split, %d + %d offered", scaled(320), scaled(80)))
	answered("80/20 split", m.from, m.to, l1, l2)
	t.Logf("80/20: the clients saw gateway 1 admit %.1f/s, gateway 2 %.1f/s", admittedRate(m.from, m.to, l1), admittedRate(m.from, m.to, l2))

	// Gateway 2 goes away without a word (no Leave): its share returns
	// once its last report lapses (eight intervals, 2 s) or the pool
	// drops it, whichever comes first.
	require.NoError(t, gws[1].Stop())
	require.NoError(t, pools[1].Shutdown())
	m = measure(2*time.Second, gws[:1], tenantA) // from 2 s after it stopped
	within(t, L, m, fmt.Sprintf("gateway 1 alone, %d offered, from 2 s after gateway 2 stopped", scaled(320)))
	answered("gateway 1 alone", m.from, m.to, l1)
}

// A tenant flooding a gateway is held to its limit while another tenant,
// without limits, keeps its pace on the same gateway.
func TestANoisyTenantIsLimitedWhileAnotherKeepsItsPace(t *testing.T) {
	if testing.Short() {
		t.Skip("measures rates for 5 s")
	}
	limit := scaled(100)
	b := newBundle(t)
	b.control.SetPlan(tenantA, limited("starter", limit, 0))
	b.start(t)
	b.waitReady(t)
	noisy := newLoader(t, b.gw, b.key(t, tenancy.RoleProducer, "default"), scaled(400))
	quiet := newLoader(t, b.gw, b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleProducer, "default")), scaled(200))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go noisy.run(ctx, &wg)
	go quiet.run(ctx, &wg)
	m := measure(3*time.Second, []*Server{b.gw}, tenantA)
	from, to := m.from, m.to
	cancel()
	wg.Wait()

	within(t, float64(limit), m, fmt.Sprintf("the noisy tenant, %d offered", scaled(400)))
	t.Logf("the noisy tenant: the clients saw %.1f admitted/s", admittedRate(from, to, noisy))
	// Refusals are owed only for what arrived over what the bucket could
	// pass: the window's flow and a full bucket at its start.
	if m.arrived > 1.1*float64(limit)*(1+1/to.Sub(from).Seconds()) {
		require.Greater(t, noisy.count(from, to, func(a answer) bool { return a.status == http.StatusTooManyRequests }), 0)
	}
	// The quiet tenant keeps its pace: what its loader offered in the
	// window is admitted. Counted against what the loader stamped in the
	// window, not its nominal rate: on a loaded machine its ticks fall
	// behind and catch up, crowding stamps into the window or out of it.
	// Held when the loader had a slot for every request (the machine
	// delivered them); one not sent for want of a slot says its answers
	// took longer than its slots last, which a loaded machine does to
	// every request, refused or not (the refusals are held below).
	offered := quiet.count(from, to, func(answer) bool { return true })
	notSent := quiet.count(from, to, func(a answer) bool { return a.status == 0 })
	quietAdmitted := quiet.count(from, to, func(a answer) bool { return a.status == http.StatusCreated })
	t.Logf("the quiet tenant: %.1f admitted/s of %d offered; %d of the %d it offered admitted (%d not sent, %d answers outstanding)",
		admittedRate(from, to, quiet), scaled(200), quietAdmitted, offered, notSent, maxInFlight)
	if notSent == 0 {
		require.InDelta(t, float64(offered), float64(quietAdmitted), float64(offered)*0.05, "the quiet tenant keeps its pace")
	} else {
		t.Logf("the quiet tenant: the machine did not deliver its load (%d not sent): its pace is not held", notSent)
	}
	require.Zero(t, quiet.count(time.Time{}, time.Now(), func(a answer) bool { return a.status != 0 && (a.status != http.StatusCreated || a.limited) }),
		"the quiet tenant is never refused and carries no RateLimit field")
}
