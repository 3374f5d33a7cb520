package limits

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/wire"
)

// Rate limits across gateways. A tenant's limit holds for all gateways
// together, whichever of them its clients reach, without a call on the
// hot path: each gateway divides each limit among the gateways by their
// recent demand.
//
// Every RateLimitSyncInterval (250 ms) a gateway measures, per limit of
// every tenant it serves, the demand it saw over the last demandSlots
// intervals (about a second): units asked per second, admitted or
// refused. It sends that to every other gateway of the gossip pool
// (gossip.KindRateDemand datagrams, encrypted with the pool's key and
// signed by the gateway's own, demand.go), and sets its own bucket's rate
// to its share:
//
//	share = limit × (own + f) / Σ over the gateways with demand (theirs + f)
//
// with f = floorShare × limit, so the shares add up to the limit (every
// gateway computes with the same demands, up to one interval's lag)
// however the load is spread, a gateway of small demand still gets a
// little, and one whose clients just arrived is not starved until its
// demand is known. While the tenant asks for less than its limit every
// share exceeds its demand; when it asks for more, every gateway admits
// its share and the sum is the limit.
//
// A limit new on a gateway (a tenant's first request there since the
// gateway started, or since it forgot the idle tenant) takes at most
// limit / (gateways in the pool) for its first two intervals: gateways
// that meet a tenant at the same moment cannot each take the whole limit
// before they hear of each other.
//
// A gateway that stops reporting (gone, or its datagrams lost) counts
// for peerReportsValid intervals after its last report, and not at all
// once the pool drops it, so its share returns to the others within
// about two seconds. A gateway without a pool, or with no peer that
// reports, takes the whole limit.

const (
	// demandSlots is how many intervals demand is measured over.
	demandSlots = 4
	// floorShare is the demand each gateway with demand is credited on
	// top of its own, as a fraction of the limit.
	floorShare = 0.05
	// peerReportsValid is how many intervals a peer's report counts.
	peerReportsValid = 8
	// demandVersion heads every report; a gateway ignores another version.
	demandVersion = 1
	// newcomerIntervals is how long a limit new on a gateway takes at most
	// an equal part of the limit: two exchanges, after which every gateway
	// that had demand for the tenant has heard of every other.
	newcomerIntervals = 2
)

// demandWindow measures what is asked of a limit (rateLimiter.mu guards
// it).
type demandWindow struct {
	seen   float64   // asked since since
	since  time.Time // when the current slot began
	counts [demandSlots]float64
	spans  [demandSlots]time.Duration
	next   int
}

// roll ends the current slot at now and returns the demand, in units a
// second, over the window.
func (w *demandWindow) roll(now time.Time) float64 {
	w.counts[w.next], w.spans[w.next] = w.seen, max(0, now.Sub(w.since))
	w.next = (w.next + 1) % demandSlots
	w.seen, w.since = 0, now
	var n float64
	var d time.Duration
	for i := range demandSlots {
		n, d = n+w.counts[i], d+w.spans[i]
	}
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

// rateSync divides the rate limits among the gateways.
type rateSync struct {
	pool     *gossip.Pool // nil: this gateway is alone
	clock    clockwork.Clock
	log      *slog.Logger
	interval time.Duration

	signer   *demandSigner // nil: no credentials, nothing sent or taken
	lastSent uint64        // the seq of the last report sent (announce's goroutine only)

	mu          sync.Mutex
	peers       map[string]map[string]peerDemand // tenant → gateway → its last report
	sendFailing bool
	refusing    bool // a report was refused since the last one taken
}

// peerDemand is another gateway's demand on a tenant's limits.
type peerDemand struct {
	rps, eps float64
	at       time.Time
}

// demandReport is one tenant's demand, as sent to the other gateways.
type demandReport struct {
	tid      string
	rps, eps float64
}

func newRateSync(cfg Config) *rateSync {
	return &rateSync{pool: cfg.Gossip, clock: cfg.Clock, log: cfg.Logger, interval: cfg.RateLimitSyncInterval,
		signer: newDemandSigner(cfg.TLS), peers: map[string]map[string]peerDemand{}}
}

// limitsFor is the tenantRates of a tenant's plan limits: nil when it
// sets none, old when they did not change. A new limit starts from its
// share given what the other gateways report.
func (rs *rateSync) limitsFor(tid string, lim wire.PlanLimits, old *tenantRates, now time.Time) *tenantRates {
	var was tenantRates
	if old != nil {
		was = *old
	}
	tr := &tenantRates{
		rps: rs.limiter(tid, lim.RequestsPerSecond, was.rps, policyRequests, now),
		eps: rs.limiter(tid, lim.EnqueuesPerSecond, was.eps, policyEnqueues, now),
	}
	switch {
	case tr.rps == nil && tr.eps == nil:
		return nil
	case old != nil && tr.rps == old.rps && tr.eps == old.eps:
		return old
	}
	tr.policy = policyField(tr.rps, tr.eps)
	return tr
}

// limiter is the limiter of one limit: old when its value did not change.
func (rs *rateSync) limiter(tid string, limit *int64, old *rateLimiter, policy string, now time.Time) *rateLimiter {
	if limit == nil {
		return nil
	}
	v := max(0, *limit)
	if old != nil && old.limit == float64(v) {
		return old
	}
	name, what := "requests_per_second", "requests"
	if policy == policyEnqueues {
		name, what = "enqueues_per_second", "jobs enqueued"
	}
	var demand demandWindow
	var own float64
	if old != nil { // the demand measured goes on
		old.mu.Lock()
		demand, own = old.demand, old.lastDemand
		old.mu.Unlock()
	}
	share := rs.share(tid, policy, float64(v), own, now)
	var until time.Time
	if old == nil {
		// Its peers may be just as new to the tenant: until they have
		// exchanged demand, each takes no more than an equal part.
		until = now.Add(newcomerIntervals * rs.interval)
		share = min(share, float64(v)/float64(rs.gateways()))
	}
	l := newRateLimiter(name, policy, what, v, share, now)
	l.newcomerUntil = until
	if old != nil {
		l.demand, l.lastDemand = demand, own
	}
	return l
}

// share is this gateway's share of a tenant's limit given its own demand
// and the reports of the others.
func (rs *rateSync) share(tid, policy string, limit, own float64, now time.Time) float64 {
	f := limit * floorShare
	total := own + f
	rs.mu.Lock()
	for _, p := range rs.peers[tid] {
		d := p.rps
		if policy == policyEnqueues {
			d = p.eps
		}
		if d > 0 && now.Sub(p.at) <= peerReportsValid*rs.interval {
			total += d + f
		}
	}
	rs.mu.Unlock()
	if total <= 0 {
		return limit
	}
	return limit * (own + f) / total
}

// gateways is how many gateways the pool lists, this one included.
func (rs *rateSync) gateways() int {
	if rs.pool == nil {
		return 1
	}
	n := 0
	for _, m := range rs.pool.Members() {
		if m.Meta.Role == gossip.RoleGateway {
			n++
		}
	}
	return max(n, 1)
}

// run exchanges demand every interval until ctx ends. It ticks on the
// wall clock, as gossip does.
func (rs *rateSync) run(ctx context.Context, pc *Plans) {
	if rs.pool != nil {
		defer rs.pool.HandleMessages(gossip.KindRateDemand, rs.receive)()
	}
	t := time.NewTicker(rs.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rs.announce(rs.tick(pc))
		}
	}
}

// tick measures the demand on every limited tenant and sets each bucket
// to its share; it returns the demand, for the other gateways.
func (rs *rateSync) tick(pc *Plans) []demandReport {
	now := rs.clock.Now()
	rs.expire(now)
	var report []demandReport
	pc.entries.Range(func(_, v any) bool {
		e := v.(*planEntry)
		tr := e.rates.Load()
		if tr == nil {
			return true
		}
		d := demandReport{tid: e.tid}
		if tr.rps != nil {
			d.rps = rs.rebalance(e.tid, tr.rps, now)
		}
		if tr.eps != nil {
			d.eps = rs.rebalance(e.tid, tr.eps, now)
		}
		if d.rps > 0 || d.eps > 0 {
			report = append(report, d)
		}
		return true
	})
	return report
}

// rebalance ends l's demand slot, sets its rate to its share, and returns
// its demand.
func (rs *rateSync) rebalance(tid string, l *rateLimiter, now time.Time) float64 {
	l.mu.Lock()
	own := l.demand.roll(now)
	l.lastDemand = own
	l.mu.Unlock()
	share := rs.share(tid, l.policy, l.limit, own, now)
	if now.Before(l.newcomerUntil) {
		share = min(share, l.limit/float64(rs.gateways()))
	}
	l.mu.Lock()
	l.b.setRate(now, share)
	l.mu.Unlock()
	return own
}

// expire forgets reports past their validity and those of gateways the
// pool no longer lists.
func (rs *rateSync) expire(now time.Time) {
	var live map[string]bool
	if rs.pool != nil {
		ms := rs.pool.Members()
		live = make(map[string]bool, len(ms))
		for _, m := range ms {
			live[m.Name] = true
		}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.signer != nil {
		rs.signer.failures = 0
		for name := range rs.signer.last {
			if live != nil && !live[name] {
				delete(rs.signer.last, name)
			}
		}
	}
	for tid, byPeer := range rs.peers {
		for name, p := range byPeer {
			if now.Sub(p.at) > peerReportsValid*rs.interval || (live != nil && !live[name]) {
				delete(byPeer, name)
			}
		}
		if len(byPeer) == 0 {
			delete(rs.peers, tid)
		}
	}
}

// announce sends report to every other gateway of the pool.
func (rs *rateSync) announce(report []demandReport) {
	if rs.pool == nil || rs.signer == nil || len(report) == 0 {
		return
	}
	msgs, failed := rs.seal(report)
	for _, m := range rs.pool.Members() {
		if m.Meta.Role != gossip.RoleGateway || m.Name == rs.pool.Name() {
			continue
		}
		for _, msg := range msgs {
			if err := rs.pool.Send(m, gossip.KindRateDemand, msg); err != nil {
				failed = err
			}
		}
	}
	switch {
	case failed != nil && !rs.sendFailing:
		rs.log.Warn("gateway: cannot send rate-limit demand to other gateways: limits may be exceeded until it is", "err", failed)
	case failed == nil && rs.sendFailing:
		rs.log.Info("gateway: sending rate-limit demand to other gateways again")
	}
	rs.sendFailing = failed != nil
}

// seal packs report into signed messages, each with a seq later than
// any sent before (the wall clock's nanoseconds, so a restarted gateway
// goes on from where it was).
func (rs *rateSync) seal(report []demandReport) ([][]byte, error) {
	size := rs.signer.bodySize(rs.pool.MaxMessageBody())
	if size < 64 {
		return nil, fmt.Errorf("the gateway's certificate leaves %d bytes of a gossip packet for demand", size)
	}
	var msgs [][]byte
	for _, body := range encodeDemand(report, size) {
		rs.lastSent = max(uint64(time.Now().UnixNano()), rs.lastSent+1)
		msg, err := rs.signer.seal(rs.pool.Name(), rs.lastSent, body)
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// receive takes another gateway's report (on gossip's packet goroutine):
// signed by a gateway, for the member that sent it, and newer than the
// last taken from it (messages of one report overtaken in flight lose
// that tenant's demand for an interval; the next report brings it).
// Anything else is dropped, counted, and logged once until a report is
// taken again.
func (rs *rateSync) receive(from string, msg []byte) {
	if rs.signer == nil {
		return
	}
	now := rs.clock.Now()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.signer.failures >= badSignersPerInterval {
		demandRefused.Inc()
		return
	}
	seq, body, err := rs.signer.open(from, msg, time.Now()) // certificates live on the wall clock
	if err == nil && seq <= rs.signer.last[from] {
		err = fmt.Errorf("a report of %s no newer than one taken: a replay, or overtaken in flight", from)
	}
	var report []demandReport
	if err == nil {
		var ok bool
		if report, ok = decodeDemand(body); !ok {
			err = errors.New("malformed demand")
		}
	}
	if err != nil {
		rs.signer.failures++
		demandRefused.Inc()
		if !rs.refusing {
			rs.log.Warn("gateway: refused a rate-limit demand report", "from", from, "err", err)
		}
		rs.refusing = true
		return
	}
	rs.signer.last[from] = seq
	rs.refusing = false
	rs.take(from, report, now)
}

// take records a verified report (rs.mu held).
func (rs *rateSync) take(from string, report []demandReport, now time.Time) {
	for _, d := range report {
		byPeer := rs.peers[d.tid]
		if byPeer == nil {
			byPeer = map[string]peerDemand{}
			rs.peers[d.tid] = byPeer
		}
		byPeer[from] = peerDemand{rps: d.rps, eps: d.eps, at: now}
	}
}
