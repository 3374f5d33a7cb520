package webhooks

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// runner delivers one endpoint's events, one at a time, in order.
type runner struct {
	d      *Deliverer
	k      hkey
	hook   *engine.WebhookRecord
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// Owned by run: the cursor delivered through and the failing run's
	// start, and what was last recorded of them.
	cursor, recorded uint64
	failing, recFail int64
	lastRecord       time.Time
	// attempts are the deliveries sent since the last record, metered
	// by it (webhook_deliveries), and log what they were (with the
	// runner's notes) for the delivery log; a leader change loses at
	// most these.
	attempts int
	log      []engine.WebhookAttempt
}

func (d *Deliverer) startRunner(k hkey, w *engine.WebhookRecord) *runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{d: d, k: k, hook: w, ctx: ctx, cancel: cancel, cursor: w.Cursor, recorded: w.Cursor,
		failing: w.FailingSince, recFail: w.FailingSince, lastRecord: d.cfg.Clock.Now()}
	r.wg.Add(1)
	go r.run()
	return r
}

// close stops the runner; it records its progress on the way out.
func (r *runner) close() {
	r.cancel()
	r.wg.Wait()
}

func (r *runner) run() {
	defer r.wg.Done()
	defer r.progress(false, "")
	r.sameShard()
	var buf []engine.Event
	for r.ctx.Err() == nil {
		evs, missed, skipTo := r.d.events.Read(r.k.ns, r.cursor, 100, buf[:0])
		buf = evs
		if missed {
			r.note(wire.WebhookDelivery{At: r.d.cfg.Clock.Now().UTC(),
				Error: fmt.Sprintf("events after %d were trimmed from the log before they were delivered; resuming after %d", r.cursor, skipTo)})
			r.cursor = skipTo
		}
		for i := range evs {
			ev := &evs[i]
			if service.WebhookWants(r.hook, ev.Name(), ev.Queue) && !r.deliver(ev) {
				return
			}
			r.cursor = ev.Seq
			if r.d.cfg.Clock.Since(r.lastRecord) >= r.d.cfg.ProgressEvery {
				r.progress(false, "")
			}
		}
		if len(evs) > 0 {
			continue
		}
		if r.d.cfg.Clock.Since(r.lastRecord) >= r.d.cfg.ProgressEvery || r.failing != r.recFail {
			r.progress(false, "") // idle: what was delivered is recorded within ProgressEvery
		}
		select {
		case <-r.ctx.Done():
		case <-r.d.cfg.Clock.After(r.d.cfg.Scan):
		}
	}
}

// sameShard moves a cursor past this shard's log to its newest event: a
// record that came with a move or a restore from a shard whose log was
// further on (a cursor from one behind reads below this log's floor, and
// resumes at its oldest event).
func (r *runner) sameShard() {
	if end := r.d.node.AppliedIndex()<<engine.EventSeqBits | (1<<engine.EventSeqBits - 1); r.cursor > end {
		latest := r.d.events.Latest(r.k.ns)
		r.note(wire.WebhookDelivery{At: r.d.cfg.Clock.Now().UTC(),
			Error: fmt.Sprintf("the cursor %d is of another shard's log (the namespace moved or was restored here); resuming after %d", r.cursor, latest)})
		r.cursor = latest
	}
}

// deliver sends ev until it is accepted, retried for RetryWindow, or the
// endpoint is disabled; false when the runner must stop.
func (r *runner) deliver(ev *engine.Event) bool {
	ce := r.d.cloudEvent(r.k.ns, ev)
	first := r.d.cfg.Clock.Now()
	for attempt := 1; ; attempt++ {
		a := r.d.send(r.ctx, r.k.ns, r.hook, ce, attempt)
		if r.ctx.Err() != nil {
			return false // stopping: the next runner or leader sends it again
		}
		r.attempts++
		r.note(a)
		now := r.d.cfg.Clock.Now()
		if a.OK {
			if r.failing != 0 {
				r.failing = 0
				r.progress(false, "")
			}
			return true
		}
		if r.failing == 0 || now.Sub(r.lastRecord) >= r.d.cfg.ProgressEvery {
			if r.failing == 0 {
				r.failing = now.UnixNano()
			}
			r.progress(false, "")
		}
		if since := now.Sub(time.Unix(0, r.failing)); since >= r.d.cfg.DisableAfter {
			reason := fmt.Sprintf("deliveries failed for %s; the last: %s", since.Round(time.Minute), a.Error)
			r.progress(true, reason)
			r.d.cfg.Logger.Info("webhooks: endpoint disabled", "namespace", r.k.ns, "webhook", r.k.id, "reason", reason)
			return false
		}
		if now.Sub(first) >= r.d.cfg.RetryWindow {
			r.note(wire.WebhookDelivery{EventID: ce.ID, Type: ce.Type, At: now.UTC(), Attempt: attempt,
				Error: fmt.Sprintf("given up after %d attempts over %s", attempt, r.d.cfg.RetryWindow)})
			return true
		}
		select {
		case <-r.ctx.Done():
			return false
		case <-r.d.cfg.Clock.After(r.backoff(attempt)):
		}
	}
}

// backoff is the wait after the attempt-th failure: RetryBase doubled
// per attempt, at most RetryMax, ±25%.
func (r *runner) backoff(attempt int) time.Duration {
	d := r.d.cfg.RetryBase
	for i := 1; i < attempt && d < r.d.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, r.d.cfg.RetryMax)
	return d*3/4 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// progress records the cursor and failing run if they changed (or a
// disable). A refusal (no longer leader) is left: the scan stops this
// runner and the next leader starts from what was recorded.
func (r *runner) progress(disable bool, reason string) {
	if !disable && r.cursor == r.recorded && r.failing == r.recFail && r.attempts == 0 && len(r.log) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := &engine.WebhookProgressCmd{NS: r.k.ns, ID: r.k.id, Updated: r.hook.UpdatedAt, Cursor: r.cursor,
		FailingSince: r.failing, Disable: disable, Reason: reason, Attempts: r.attempts, Log: r.log}
	if _, err := engine.WebhookProgressFor(c).Propose(ctx, r.d.node, c); err != nil {
		if r.d.node.IsLeader() {
			r.d.cfg.Logger.Warn("webhooks: progress", "namespace", r.k.ns, "webhook", r.k.id, "err", err)
		}
		return
	}
	r.recorded, r.recFail, r.lastRecord = c.Cursor, c.FailingSince, r.d.cfg.Clock.Now()
	r.attempts -= c.Attempts
	r.log = r.log[:copy(r.log, r.log[len(c.Log):])]
}

// note keeps a for the delivery log's next record, the newest
// wire.WebhookDeliveryLogSize at most (the log keeps no more).
func (r *runner) note(a wire.WebhookDelivery) {
	if len(r.log) == wire.WebhookDeliveryLogSize {
		r.log = r.log[:copy(r.log, r.log[1:])]
	}
	r.log = append(r.log, attemptOf(&a))
}
