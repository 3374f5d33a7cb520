package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// TestNoisyNeighbour measures what a tenant flooding enqueues does to
// another tenant on the same shard (docs/BENCHMARKS.md, "Noisy neighbour,
// fair admission on and off"). It runs only with JOBBIE_NOISY=1 (`make
// noisy`, about three minutes): once against a jobbie dev with fair
// admission, once against one started with --unfair-admission, and once
// with the two tenants on two jobbie devs (fair) on the same machine
// ("apart": what sharing the machine's cores costs B without sharing a
// process, a gateway or a shard), and once more with fair admission and
// A on a plan limiting it to noisyPlanRate enqueues/s ("plan": what a
// hosted tenant's plan does; A sends as fast as its plan lets it,
// waiting out each 429's Retry-After as the SDKs do), each in data
// directories of its own. JOBBIE_NOISY_MODES
// (e.g. "fair,plan") runs some of them.
//
// In each, tenant B enqueues 200 jobs/s (paced, open loop: one job per
// request, each sent on its schedule whatever the earlier ones take) and
// 4 workers long-poll and ack them (each with 10 fetch loops, a
// client.Worker's default concurrency; JOBBIE_NOISY_CONCURRENCY sets
// another), for 15 s alone and then 15 s while
// tenant A floods with 8 producers enqueueing as fast as they can, first
// in batches of 100 jobs per request and then one job per request. A has
// no workers: its jobs pile up. It records B's enqueue latency (the
// request's round trip), B's enqueue→delivered latency (from the enqueue
// call's start, carried in the payload, to a worker's fetch returning it)
// and B's delivered throughput, with A's achieved rate; and, to say where
// B's time went, the CPU of the jobbie processes and of this process (the
// load), the shard's Raft batches (per second, mean apply time, mean
// commands) and the depth of its admission queue, sampled.
//
// Asserted: in fair and plan modes, B's throughput within 10 % of 200/s;
// in fair mode, B's enqueue p99 under each flood under twice its p99
// alone plus 5 ms; in plan mode, B's enqueue and enqueue→delivered p99
// under each flood within twice alone (the bar). The true ratios
// are logged, as are the unfair and apart runs for comparison.
func TestNoisyNeighbour(t *testing.T) {
	if os.Getenv("JOBBIE_NOISY") != "1" {
		t.Skip("set JOBBIE_NOISY=1 (make noisy) to measure; about three minutes")
	}
	var all []noisyPhase
	modes := os.Getenv("JOBBIE_NOISY_MODES")
	for _, mode := range []struct {
		name          string
		unfair, apart bool
	}{{"fair", false, false}, {"unfair", true, false}, {"apart", false, true}, {"plan", false, false}} {
		if modes != "" && !slices.Contains(strings.Split(modes, ","), mode.name) {
			continue
		}
		d := launchNoisy(t, filepath.Join(t.TempDir(), mode.name), mode.unfair)
		dA := d
		if mode.apart {
			dA = launchNoisy(t, filepath.Join(t.TempDir(), mode.name+"-a"), false)
		}
		phases := runNoisyMode(t, d, dA, mode.name)
		d.stop()
		dA.stop()
		all = append(all, phases...)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\nB: %d jobs/s, %d workers × %d fetch loops; A: %d producers, no workers\n", noisyRate, noisyWorkers, noisyConcurrency(t), noisyProducers)
	fmt.Fprintf(&b, "%-6s %-14s %21s %21s %9s %15s %13s %22s %16s\n", "mode", "phase", "B enqueue p50/p99", "B enq→deliv p50/p99", "B jobs/s", "A jobs/s (429)", "CPU srv/test", "batches, apply, cmds", "pending mean/max")
	for _, p := range all {
		a := "-"
		if p.flood != "" {
			a = fmt.Sprintf("%.0f (%d)", p.aRate, p.a429)
		}
		fmt.Fprintf(&b, "%-6s %-14s %21s %21s %9.1f %15s %13s %22s %16s\n", p.mode, p.name,
			ms(p.enq.p50)+" / "+ms(p.enq.p99), ms(p.del.p50)+" / "+ms(p.del.p99), p.bRate, a,
			fmt.Sprintf("%.0f%% / %.0f%%", p.cpuServer, p.cpuTest), p.apply.format(p.window), p.pending)
	}
	for _, p := range all {
		if p.flood == "" {
			continue
		}
		alone := noisyAlone(all, p.mode)
		fmt.Fprintf(&b, "%s, %s: B enqueue p99 %.2f× alone, enqueue→delivered p99 %.2f× alone (bar 2×: %s); throughput %.1f%% of alone\n",
			p.mode, p.name, ratio(p.enq.p99, alone.enq.p99), ratio(p.del.p99, alone.del.p99),
			meets(p.enq.p99 <= 2*alone.enq.p99 && p.del.p99 <= 2*alone.del.p99), 100*p.bRate/alone.bRate)
	}
	t.Log(b.String())

	// Every check is reported, not just the first that fails.
	for _, p := range all {
		if p.mode != "fair" && p.mode != "plan" {
			continue // unfair and apart are the comparisons, not claims
		}
		assert.InDelta(t, noisyRate, p.bRate, noisyRate/10, "%s, %s: B's throughput", p.mode, p.name)
		if p.flood != "" && p.mode == "plan" {
			alone := noisyAlone(all, p.mode)
			assert.LessOrEqual(t, p.enq.p99, 2*alone.enq.p99, "plan, %s: B's enqueue p99 under the flood against 2× alone (%s)", p.name, alone.enq.p99)
			assert.LessOrEqual(t, p.del.p99, 2*alone.del.p99, "plan, %s: B's enqueue→delivered p99 under the flood against 2× alone (%s)", p.name, alone.del.p99)
		}
		if p.flood != "" && p.mode == "fair" {
			alone := noisyAlone(all, p.mode)
			assert.Less(t, p.enq.p99, 2*alone.enq.p99+5*time.Millisecond,
				"fair, %s: B's enqueue p99 under the flood against 2× alone (%s) + 5 ms", p.name, alone.enq.p99)
		}
	}
}

const (
	noisyRate      = 200              // B's jobs per second
	noisyWindow    = 15 * time.Second // each phase's measured time
	noisyWorkers   = 4                // B's workers
	noisyProducers = 8                // A's producers
	noisyBatch     = 100              // A's jobs per request in the batch flood
	noisyPlanRate  = 1000             // A's plan in plan mode: enqueues per second
)

// noisyPhase is what one phase measured.
type noisyPhase struct {
	mode, name string
	flood      string // "", "batch" or "single"
	enq, del   quantiles
	bRate      float64    // B's jobs delivered within the window per second
	aRate      float64    // A's jobs enqueued per second over the window
	a429       int64      // A's requests refused with 429
	cpuServer  float64    // jobbie dev's CPU over the window, % of one core
	cpuTest    float64    // this test process's CPU (the load), % of one core
	apply      applyStats // the shard's Raft batches applied over the window
	pending    pendingStats
	window     time.Duration
}

// pendingStats sample the shard's jobbie_raft_pending_proposals (the
// admission queue, where fair admission reorders) over the window.
type pendingStats struct {
	n         int
	sum, peak float64
}

func (p pendingStats) String() string {
	if p.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f / %.0f", p.sum/float64(p.n), p.peak)
}

// samplePending scrapes the admission queue's depth every 250 ms until
// the returned function is called, which returns the samples.
func samplePending(t *testing.T, d *devServer) func() pendingStats {
	done, out := make(chan struct{}), make(chan pendingStats)
	go func() {
		var p pendingStats
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				out <- p
				return
			case <-tick.C:
				if v, ok := shardMetrics(d)["jobbie_raft_pending_proposals"]; ok {
					p.n++
					p.sum += v
					p.peak = max(p.peak, v)
				}
			}
		}
	}()
	return func() pendingStats { close(done); return <-out }
}

// applyStats are the shard's jobbie_raft_apply_seconds and
// jobbie_raft_apply_commands: batches applied, their time and commands.
type applyStats struct{ batches, seconds, commands float64 }

func (a applyStats) sub(b applyStats) applyStats {
	return applyStats{a.batches - b.batches, a.seconds - b.seconds, a.commands - b.commands}
}

// format is the batches applied per second over window, and a batch's
// mean time and commands.
func (a applyStats) format(window time.Duration) string {
	if a.batches == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/s, %.2f ms, %.0f", a.batches/window.Seconds(), 1000*a.seconds/a.batches, a.commands/a.batches)
}

// shardApply is the shard group's apply histograms.
func shardApply(t *testing.T, d *devServer) applyStats {
	m := shardMetrics(d)
	a := applyStats{m["jobbie_raft_apply_seconds_count"], m["jobbie_raft_apply_seconds_sum"], m["jobbie_raft_apply_commands_sum"]}
	require.NotZero(t, a.batches, "no jobbie_raft_apply_seconds of a shard group at %s", d.metrics)
	return a
}

// shardMetrics scrapes the metrics of the shard's Raft group (label
// group="shard …") from the gateway's metrics listener (in jobbie dev
// every role shares one registry), by name; none if the scrape failed.
func shardMetrics(d *devServer) map[string]float64 {
	out := map[string]float64{}
	resp, err := d.ops.Get(d.metrics + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return out
	}
	for _, line := range strings.Split(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.Contains(rest, `group="shard `) {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			out[name] = v
		}
	}
	return out
}

type quantiles struct{ p50, p99 time.Duration }

// noisyMeter is B's side of a mode: the deliveries its workers saw,
// recorded under the phase the payload names.
type noisyMeter struct {
	mu        sync.Mutex
	delivered map[int][]noisyDelivery
	sent      map[int]int // B jobs enqueued, by phase
	enq       map[int][]time.Duration
	total     int // deliveries of all phases
	changed   chan struct{}
}

type noisyDelivery struct {
	at  time.Time
	lat time.Duration
}

// noisyPayload is a B job's payload: its phase, when its enqueue call
// started (unix ns) and padding to about 200 bytes.
type noisyPayload struct {
	Phase int    `json:"phase"`
	Sent  int64  `json:"sent"`
	Pad   string `json:"pad"`
}

var noisyPad = strings.Repeat("x", 150)

// runNoisyMode runs the phases with tenant B on d and tenant A on dA: the
// same server, or another one on the same machine (mode apart).
func runNoisyMode(t *testing.T, d, dA *devServer, mode string) []noisyPhase {
	bOwner, bt := d.tenant(t)
	var aOwner *client.Client
	if mode == "plan" {
		aOwner = noisyPlanTenant(t, dA)
	} else {
		aOwner, _ = dA.tenant(t)
	}
	m := &noisyMeter{delivered: map[int][]noisyDelivery{}, sent: map[int]int{}, enq: map[int][]time.Duration{}, changed: make(chan struct{})}
	wctx, stopWorkers := context.WithCancel(context.Background())
	var workers sync.WaitGroup
	var workerErrs atomic.Int64
	conc := noisyConcurrency(t)
	for i := range noisyWorkers {
		// Each worker a process of its own would be: its own connections.
		wc := client.New(d.gateway, bt.OwnerKey).ForWorker(fmt.Sprintf("b%d", i))
		for range conc {
			workers.Add(1)
			go func() {
				defer workers.Done()
				m.work(wctx, wc, &workerErrs)
			}()
		}
	}
	defer func() {
		stopWorkers()
		workers.Wait()
		require.Zero(t, workerErrs.Load(), "%s: B's workers had errors fetching or acking", mode)
	}()

	// A few seconds of B before the first phase: connections opened, the
	// queue created, the processes' caches warm.
	m.produce(t, bOwner, 0, 3*time.Second)
	m.drained(t, 0)

	var out []noisyPhase
	for i, ph := range []struct{ name, flood string }{
		{"alone", ""}, {"flood batch100", "batch"}, {"flood single", "single"},
	} {
		phase := i + 1
		var flood *noisyFlood
		if ph.flood != "" {
			flood = startFlood(t, aOwner, ph.flood, mode == "plan")
		}
		servers := func() time.Duration {
			c := procCPU(t, d.Cmd.Process.Pid)
			if dA != d {
				c += procCPU(t, dA.Cmd.Process.Pid)
			}
			return c
		}
		cpu0, self0, apply0 := servers(), procCPU(t, os.Getpid()), shardApply(t, d)
		pending := samplePending(t, d)
		start := time.Now()
		m.produce(t, bOwner, phase, noisyWindow)
		end := time.Now()
		cpu1, self1, apply1 := servers(), procCPU(t, os.Getpid()), shardApply(t, d)
		p := noisyPhase{mode: mode, name: ph.name, flood: ph.flood, pending: pending(), window: end.Sub(start),
			cpuServer: 100 * (cpu1 - cpu0).Seconds() / end.Sub(start).Seconds(),
			cpuTest:   100 * (self1 - self0).Seconds() / end.Sub(start).Seconds(),
			apply:     apply1.sub(apply0)}
		if flood != nil {
			n, refused := flood.stop(t)
			p.aRate, p.a429 = float64(n)/end.Sub(start).Seconds(), refused
		}
		m.drained(t, phase)
		p.enq, p.del, p.bRate = m.results(phase, start, end)
		out = append(out, p)
	}
	return out
}

// noisyConcurrency is how many fetch loops each of B's workers runs:
// JOBBIE_NOISY_CONCURRENCY, or 10, a client.Worker's default.
func noisyConcurrency(t *testing.T) int {
	v := os.Getenv("JOBBIE_NOISY_CONCURRENCY")
	if v == "" {
		return 10
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "JOBBIE_NOISY_CONCURRENCY")
	require.Positive(t, n, "JOBBIE_NOISY_CONCURRENCY")
	return n
}

// work is one fetch loop of a worker, as client.Worker runs: it fetches
// B's jobs one at a time, long-polling, records each delivery and acks
// it, until ctx ends.
func (m *noisyMeter) work(ctx context.Context, c *client.Client, errs *atomic.Int64) {
	for ctx.Err() == nil {
		j, err := c.Fetch(ctx, client.FetchRequest{Queues: []string{"b"}, Timeout: 2 * time.Second})
		if err != nil {
			if ctx.Err() == nil {
				errs.Add(1)
			}
			continue
		}
		if j == nil {
			continue
		}
		at := time.Now()
		var p noisyPayload
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			errs.Add(1)
			continue
		}
		m.mu.Lock()
		m.delivered[p.Phase] = append(m.delivered[p.Phase], noisyDelivery{at: at, lat: at.Sub(time.Unix(0, p.Sent))})
		m.total++
		close(m.changed)
		m.changed = make(chan struct{})
		m.mu.Unlock()
		if err := c.Ack(ctx, j.ID, nil); err != nil && ctx.Err() == nil {
			errs.Add(1)
		}
	}
}

// produce enqueues B's jobs of phase at noisyRate for dur, open loop:
// job i is sent at start + i/rate on a goroutine of its own, so a slow
// answer delays no later job. It returns when every enqueue answered.
func (m *noisyMeter) produce(t *testing.T, c *client.Client, phase int, dur time.Duration) {
	interval := time.Second / noisyRate
	total := int(dur / interval)
	lat := make([]time.Duration, total)
	var failed atomic.Int64
	var lastErr atomic.Value
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	defer timer.Stop()
	start := time.Now()
	for i := 0; i < total; {
		<-timer.C
		due := min(int(time.Since(start)/interval)+1, total)
		for ; i < due; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				t0 := time.Now()
				payload, _ := json.Marshal(noisyPayload{Phase: phase, Sent: t0.UnixNano(), Pad: noisyPad})
				_, err := c.Enqueue(context.Background(), client.EnqueueRequest{Queue: "b", Payload: json.RawMessage(payload)})
				lat[i] = time.Since(t0)
				if err != nil {
					failed.Add(1)
					lastErr.Store(err.Error())
				}
			}(i)
		}
		timer.Reset(time.Until(start.Add(time.Duration(i) * interval)))
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "B's enqueues failed in phase %d: %v", phase, lastErr.Load())
	m.mu.Lock()
	m.sent[phase] = total
	m.enq[phase] = lat
	m.mu.Unlock()
}

// drained waits until every job B enqueued in phase was delivered.
func (m *noisyMeter) drained(t *testing.T, phase int) {
	deadline := time.After(60 * time.Second)
	for {
		m.mu.Lock()
		got, want, changed := len(m.delivered[phase]), m.sent[phase], m.changed
		m.mu.Unlock()
		if got >= want {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("phase %d: %d of B's %d jobs delivered after 60 s", phase, got, want)
		}
	}
}

// results are phase's enqueue and enqueue→delivered quantiles and the
// jobs delivered between start and end per second.
func (m *noisyMeter) results(phase int, start, end time.Time) (enq, del quantiles, rate float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	enq = quantilesOf(m.enq[phase])
	var lats []time.Duration
	within := 0
	for _, dl := range m.delivered[phase] {
		lats = append(lats, dl.lat)
		if !dl.at.After(end) {
			within++
		}
	}
	return enq, quantilesOf(lats), float64(within) / end.Sub(start).Seconds()
}

// noisyFlood is tenant A's producers.
type noisyFlood struct {
	client  *client.Client
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	jobs    atomic.Int64
	refused atomic.Int64
	failed  atomic.Int64
	lastErr atomic.Value
}

// startFlood starts A's producers, batch (noisyBatch jobs per request) or
// single, each sending its next request as soon as the last answered,
// and returns once A's first jobs are in.
func startFlood(t *testing.T, c *client.Client, kind string, polite bool) *noisyFlood {
	// The flood paces itself: a polite one waits out each Retry-After, a
	// rude one sends again at once; the SDK's own retries would make
	// both polite.
	c = c.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 1})
	ctx, cancel := context.WithCancel(context.Background())
	f := &noisyFlood{client: c, cancel: cancel}
	payload, _ := json.Marshal(noisyPayload{Pad: noisyPad})
	job := client.EnqueueRequest{Queue: "a", Payload: json.RawMessage(payload)}
	batch := client.BatchRequest{Jobs: slices.Repeat([]client.EnqueueRequest{job}, noisyBatch)}
	first := make(chan struct{})
	var once sync.Once
	for range noisyProducers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for ctx.Err() == nil {
				var n int
				var err error
				if kind == "batch" {
					var res *client.BatchResult
					if res, err = c.EnqueueBatch(ctx, batch); err == nil {
						n = len(res.JobIDs)
					}
				} else if _, err = c.Enqueue(ctx, job); err == nil {
					n = 1
				}
				switch {
				case err == nil:
					f.jobs.Add(int64(n))
					once.Do(func() { close(first) })
				case ctx.Err() != nil:
				case client.IsRateLimited(err):
					f.refused.Add(1)
					if e, ok := client.AsError(err); ok && polite && e.RetryAfter > 0 {
						select { // as a client that honours Retry-After
						case <-time.After(e.RetryAfter):
						case <-ctx.Done():
						}
					}
				default:
					f.failed.Add(1)
					f.lastErr.Store(err.Error())
				}
			}
		}()
	}
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("tenant A's flood enqueued nothing in 30 s: %v", f.lastErr.Load())
	}
	f.jobs.Store(0) // counted from B's window on
	f.refused.Store(0)
	return f
}

// stop ends the flood and returns the jobs A enqueued and its requests
// refused with 429 since startFlood returned.
func (f *noisyFlood) stop(t *testing.T) (int64, int64) {
	n, refused := f.jobs.Load(), f.refused.Load()
	f.cancel()
	f.wg.Wait()
	f.client.CloseIdleConnections()
	require.Zero(t, f.failed.Load(), "tenant A's flood failed otherwise than 429: %v", f.lastErr.Load())
	return n, refused
}

// launchNoisy starts `jobbie dev` in dir on fresh loopback ports, with
// --unfair-admission when unfair, as launch does for the shared server.
func launchNoisy(t *testing.T, dir string, unfair bool) *devServer {
	t.Helper()
	var flags []string
	if unfair {
		flags = append(flags, "--unfair-admission")
	}
	d, err := launch(dir, flags...)
	require.NoError(t, err)
	t.Cleanup(d.stop)
	return d
}

// procCPU is the user and system CPU a process has used, from /proc.
func procCPU(t *testing.T, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// The fields after the command name, which is in parentheses: utime
	// and stime are the 14th and 15th of the line, in clock ticks (100/s).
	rest := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, err := strconv.ParseInt(rest[11], 10, 64)
	require.NoError(t, err)
	stime, err := strconv.ParseInt(rest[12], 10, 64)
	require.NoError(t, err)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func quantilesOf(d []time.Duration) quantiles {
	if len(d) == 0 {
		return quantiles{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return quantiles{p50: at(0.50), p99: at(0.99)}
}

func noisyAlone(all []noisyPhase, mode string) noisyPhase {
	for _, p := range all {
		if p.mode == mode && p.flood == "" {
			return p
		}
	}
	return noisyPhase{}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func meets(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// noisyPlanTenant is tenant A on a plan of noisyPlanRate enqueues/s (and
// twice that in requests/s), in effect from its creation; it returns once
// the gateway applies it.
func noisyPlanTenant(t *testing.T, d *devServer) *client.Client {
	t.Helper()
	plan := map[string]any{"name": "noisy", "currency": "USD", "limits": map[string]any{
		"enqueues_per_second": noisyPlanRate, "requests_per_second": 2 * noisyPlanRate}}
	r := callVia(t, d.ops, http.MethodPost, d.control+"/control/v1/plans", d.operatorKey, plan)
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	op := client.New(d.control, d.operatorKey, client.WithHTTPClient(d.ops))
	ct, err := op.CreateTenantOnPlan(ctx(t), fmt.Sprintf("noisy-a-%d", tenantSeq.Add(1)), "noisy")
	require.NoError(t, err)
	eventually(t, 30*time.Second, func() bool {
		r := call(t, http.MethodGet, d.gateway+"/api/v1/queues", ct.OwnerKey, nil)
		return r.Status == http.StatusOK && r.Header.Get(wire.RateLimitPolicyHeader) != ""
	}, "the gateway applies A's plan")
	return client.New(d.gateway, ct.OwnerKey)
}
