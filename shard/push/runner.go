package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// runner delivers one queue's jobs, at most MaxInFlight at once.
type runner struct {
	d      *Dispatcher
	k      qkey
	push   *engine.PushConfig
	worker string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	slots  chan struct{}

	mu        sync.Mutex
	inflight  map[string]*call // job id → its delivery
	giveBacks map[string]int   // job id → 429/503 answers in a row
	until     time.Time        // no fetch before this (a Retry-After)
	keys      whsign.KeySet    // the namespace's signing keys, read at keysAt
	allow     []string         // the namespace's egress allow-list, read at keysAt
	keysAt    time.Time

	acks ackBatcher
}

// keysFor is how long a runner signs with the keys it read, and holds to
// the egress allow-list it read: reading and parsing keys for every
// delivery was a fifth of a busy dispatcher's CPU.
// A rotation's new key signs from the next read; the old key signs beside
// it through the overlap, so a handler trusting either sees no gap.
const keysFor = time.Second

// call is one delivery in flight; cancel aborts its request.
type call struct {
	job    *wire.FetchedJob
	cancel context.CancelCauseFunc
}

// Why a call was aborted.
var (
	errCancelled = errors.New("the job was cancelled while its push was in flight")
	errLost      = errors.New("the lease was lost")
)

func (d *Dispatcher) startRunner(k qkey, p *engine.PushConfig) *runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{d: d, k: k, push: p, worker: engine.PushWorker(k.queue), ctx: ctx, cancel: cancel,
		slots: make(chan struct{}, p.MaxInFlight), inflight: map[string]*call{}, giveBacks: map[string]int{}}
	r.wg.Add(2)
	go r.fetchLoop()
	go r.heartbeatLoop()
	return r
}

// close stops fetching, aborts the calls in flight (their jobs are given
// back) and waits.
func (r *runner) close() {
	r.cancel()
	r.wg.Wait()
}

func (r *runner) fetchLoop() {
	defer r.wg.Done()
	wait := 1.0 // seconds of long-poll, so a close is noticed
	lease := (time.Duration(r.push.TimeoutNs) + 10*time.Second).Seconds()
	for r.ctx.Err() == nil {
		if r.d.pulling(r.k, r.push) || r.paused() {
			r.sleep(r.d.cfg.Scan)
			continue
		}
		n := r.takeSlots()
		if n == 0 {
			return
		}
		// One lease command for every free slot: one fetch per job made
		// this loop's Raft round trips, not the handler, the bound on a
		// queue's deliveries per second.
		jobs, err := r.d.svc.FetchBatch(r.ctx, r.k.ns, service.Limits{}, &wire.FetchBatchRequest{Max: &n,
			FetchRequest: wire.FetchRequest{Queues: []string{r.k.queue}, WorkerID: r.worker, Hostname: "jobbie-push",
				Timeout: &wait, LeaseDuration: &lease}}, nil, nil)
		if err == nil && len(jobs) > 0 && (r.d.pulling(r.k, r.push) || r.paused()) {
			// A worker came while the fetch waited (the jobs are its), or
			// the handler said wait, or gone, meanwhile.
			for i := range jobs {
				r.giveBack(&call{job: &jobs[i]})
			}
			jobs = nil
		}
		for range n - len(jobs) {
			<-r.slots
		}
		if err != nil || len(jobs) == 0 {
			if err != nil && r.ctx.Err() == nil {
				r.sleep(r.d.cfg.Scan)
			}
			continue
		}
		for i := range jobs {
			r.start(&jobs[i])
		}
	}
}

// takeSlots waits for one free delivery slot and takes every other one
// free now; 0 when the runner is closing.
func (r *runner) takeSlots() int {
	select {
	case r.slots <- struct{}{}:
	case <-r.ctx.Done():
		return 0
	}
	n := 1
	for n < min(cap(r.slots), wire.MaxFetchBatch) {
		select {
		case r.slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

// start delivers j on a goroutine of its own, holding one slot.
func (r *runner) start(j *wire.FetchedJob) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	c := &call{job: j, cancel: cancel}
	r.mu.Lock()
	r.inflight[j.JobID] = c
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() { <-r.slots }()
		r.deliver(ctx, c)
		r.mu.Lock()
		delete(r.inflight, j.JobID)
		r.mu.Unlock()
		cancel(nil)
	}()
}

func (r *runner) paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.d.cfg.Clock.Now().Before(r.until)
}

func (r *runner) sleep(d time.Duration) {
	select {
	case <-r.d.cfg.Clock.After(d):
	case <-r.ctx.Done():
	}
}

// heartbeatLoop extends the in-flight leases in one heartbeat and aborts
// the calls whose job was cancelled or whose lease is gone.
func (r *runner) heartbeatLoop() {
	defer r.wg.Done()
	t := r.d.cfg.Clock.NewTicker(r.d.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.Chan():
		}
		r.mu.Lock()
		req := &wire.HeartbeatRequest{WorkerID: r.worker, Jobs: map[string]wire.HeartbeatEntry{}}
		calls := map[string]*call{}
		for id, c := range r.inflight {
			req.Jobs[id] = wire.HeartbeatEntry{LeaseToken: c.job.LeaseToken}
			calls[id] = c
		}
		r.mu.Unlock()
		if len(req.Jobs) == 0 {
			continue
		}
		st, err := r.d.svc.Heartbeat(r.ctx, r.k.ns, tenancy.AllQueues(), service.Limits{}, req)
		if err != nil {
			continue // the next beat tries again; the lease has room
		}
		for id, s := range st {
			switch s {
			case wire.HeartbeatCancel:
				calls[id].cancel(errCancelled)
			case wire.HeartbeatLost:
				calls[id].cancel(errLost)
			}
		}
	}
}

// deliver POSTs the job and settles its attempt by the answer.
func (r *runner) deliver(ctx context.Context, c *call) {
	j := c.job
	timeout := time.Duration(r.push.TimeoutNs)
	body, err := json.Marshal(wire.PushDelivery{JobID: j.JobID, Queue: j.Queue, Payload: j.Payload, Attempt: j.Attempt,
		MaxRetries: j.MaxRetries, Tags: j.Tags, Checkpoint: j.Checkpoint, Timeout: timeout.Seconds(),
		TraceParent: j.TraceParent, TraceState: j.TraceState})
	if err != nil {
		r.fail(c, "push: "+err.Error(), "")
		return
	}
	set, allow, err := r.keySet(ctx)
	if err != nil {
		r.giveBack(c)
		return
	}
	hdr, err := set.Headers(fmt.Sprintf("%s_%d", j.JobID, j.Attempt), r.d.cfg.Clock.Now(), body)
	if err != nil {
		r.giveBack(c)
		return
	}
	for k, v := range headersOf(r.push) {
		hdr.Set(k, v)
	}
	// The job's trace context, after the queue's headers: the job's own
	// trace wins over a fixed one.
	if j.TraceParent != "" {
		hdr.Set(wire.TraceParentHeader, j.TraceParent)
		hdr.Del(wire.TraceStateHeader) // never a fixed one beside the job's traceparent
		if j.TraceState != "" {
			hdr.Set(wire.TraceStateHeader, j.TraceState)
		}
	}
	res, err := r.d.cfg.Client.Do(ctx, outbound.Request{Tenant: tenantOf(r.k.ns), URL: r.push.URL, Header: hdr, Body: body, Timeout: timeout,
		AllowHosts: allow})
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errCancelled):
		r.fail(c, "push aborted: "+errCancelled.Error(), "") // settles the cancel
		return
	case errors.Is(cause, errLost):
		return // the lease is another's now
	case r.ctx.Err() != nil:
		r.giveBack(c) // stopping: the next leader delivers it again
		return
	}
	var oe *outbound.Error
	switch {
	case err == nil:
		r.ack(c, res.Body)
	case errors.As(err, &oe) && oe.Kind == outbound.KindStatus && res != nil && res.Status == http.StatusGone:
		r.disable(c, res.Status)
	case errors.As(err, &oe) && oe.Kind == outbound.KindStatus && res != nil &&
		(res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable):
		r.busy(c, res, err)
	case res != nil:
		if a, ok := wire.ReadPushAnswer(false, res.Body); ok {
			r.store(c, a)
			r.failAs(c, a.Error, a.Backtrace, a.NonRetryable)
			return
		}
		r.fail(c, err.Error(), "")
	default:
		r.fail(c, err.Error(), "")
	}
}

// keySet is the namespace's signing keys and egress allow-list, read
// again once keysFor passed.
func (r *runner) keySet(ctx context.Context) (whsign.KeySet, []string, error) {
	now := r.d.cfg.Clock.Now()
	r.mu.Lock()
	if r.keys != nil && now.Sub(r.keysAt) < keysFor {
		defer r.mu.Unlock()
		return r.keys, r.allow, nil
	}
	r.mu.Unlock()
	set, err := r.d.svc.SigningKeySet(ctx, r.k.ns)
	if err != nil {
		return nil, nil, err
	}
	allow := r.d.svc.EgressAllow(r.k.ns)
	r.mu.Lock()
	r.keys, r.allow, r.keysAt = set, allow, now
	r.mu.Unlock()
	return set, allow, nil
}

// settle contexts outlive a stopping runner: a settle in flight finishes.
func settleCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

func (r *runner) ack(c *call, body []byte) {
	a, _ := wire.ReadPushAnswer(true, body)
	r.store(c, a)
	if err := r.ackJob(wire.AckBatchEntry{JobID: c.job.JobID, Result: a.Result, LeaseToken: c.job.LeaseToken}); err != nil {
		r.d.cfg.Logger.Warn("push: ack", "namespace", r.k.ns, "queue", r.k.queue, "job", c.job.JobID, "err", err)
	}
	r.mu.Lock()
	delete(r.giveBacks, c.job.JobID)
	r.mu.Unlock()
}

// store saves an answer's checkpoint and progress on the job, through
// the heartbeat a worker would send.
func (r *runner) store(c *call, a wire.PushAnswer) {
	if a.Checkpoint == nil && a.Progress == nil {
		return
	}
	ctx, cancel := settleCtx()
	defer cancel()
	_, _ = r.d.svc.Heartbeat(ctx, r.k.ns, tenancy.AllQueues(), service.Limits{}, &wire.HeartbeatRequest{WorkerID: r.worker,
		Jobs: map[string]wire.HeartbeatEntry{c.job.JobID: {Progress: a.Progress, Checkpoint: a.Checkpoint, LeaseToken: c.job.LeaseToken}}})
}

func (r *runner) fail(c *call, msg, backtrace string) { r.failAs(c, msg, backtrace, false) }

// failAs fails the attempt; nonRetryable (the handler's answer says so)
// makes the job dead at once.
func (r *runner) failAs(c *call, msg, backtrace string, nonRetryable bool) {
	if len(msg)+len(backtrace) > wire.MaxErrorBytes {
		backtrace = ""
		if len(msg) > wire.MaxErrorBytes {
			msg = msg[:wire.MaxErrorBytes]
		}
	}
	ctx, cancel := settleCtx()
	defer cancel()
	if _, err := r.d.svc.Fail(ctx, r.k.ns, tenancy.AllQueues(), c.job.JobID,
		&wire.FailRequest{Error: msg, Backtrace: backtrace, WorkerID: r.worker, LeaseToken: c.job.LeaseToken, NonRetryable: nonRetryable}); err != nil {
		r.d.cfg.Logger.Warn("push: fail", "namespace", r.k.ns, "queue", r.k.queue, "job", c.job.JobID, "err", err)
	}
	r.mu.Lock()
	delete(r.giveBacks, c.job.JobID)
	r.mu.Unlock()
}

// giveBack releases the lease: the attempt is not spent.
func (r *runner) giveBack(c *call) {
	ctx, cancel := settleCtx()
	defer cancel()
	_, _ = r.d.svc.Release(ctx, r.k.ns, tenancy.AllQueues(), &wire.ReleaseRequest{WorkerID: r.worker,
		Jobs: []wire.ReleaseEntry{{JobID: c.job.JobID, Attempt: c.job.Attempt, LeaseToken: c.job.LeaseToken}}})
}

// busy answers a 429 or 503: the job goes back unspent and the queue
// waits out Retry-After (at most RetryAfterCap; 1 s without one), up to
// MaxGiveBacks times in a row for one job, then the attempt fails.
func (r *runner) busy(c *call, res *outbound.Response, err error) {
	wait := retryAfter(res.Header.Get("Retry-After"), r.d.cfg.Clock.Now())
	wait = min(max(wait, time.Second), r.d.cfg.RetryAfterCap)
	r.mu.Lock()
	r.giveBacks[c.job.JobID]++
	n := r.giveBacks[c.job.JobID]
	if until := r.d.cfg.Clock.Now().Add(wait); until.After(r.until) {
		r.until = until
	}
	r.mu.Unlock()
	if n > r.d.cfg.MaxGiveBacks {
		r.fail(c, err.Error(), "")
		return
	}
	r.giveBack(c)
}

// disable turns push off for the queue (its handler is gone) and gives
// the job back, for pull workers or a push URL set anew.
func (r *runner) disable(c *call, status int) {
	ctx, cancel := settleCtx()
	defer cancel()
	reason := fmt.Sprintf("the handler answered %d %s", status, http.StatusText(status))
	// No slot takes another job (this one, given back below, first of
	// all) from here on: the handler said it is gone.
	r.mu.Lock()
	r.until = r.d.cfg.Clock.Now().Add(time.Hour) // until the scan stops this runner
	r.mu.Unlock()
	if _, err := engine.PushDisable.Propose(ctx, r.d.node, &engine.PushDisableCmd{NS: r.k.ns, Queue: r.k.queue, URL: r.push.URL, Reason: reason}); err != nil {
		r.d.cfg.Logger.Warn("push: disable", "namespace", r.k.ns, "queue", r.k.queue, "err", err)
	}
	r.d.cfg.Logger.Info("push: disabled", "namespace", r.k.ns, "queue", r.k.queue, "reason", reason)
	r.giveBack(c)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now)
	}
	return 0
}

// tenantOf is the tenant of a shard namespace ("<tenant>/<name>"): the
// outbound bound is per tenant.
func tenantOf(ns string) string {
	t, _, _ := strings.Cut(ns, "/")
	return t
}
