package leader

import (
	"context"
	"errors"
	"sync"
	"time"
)

type moveRunner struct {
	s *Leader

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]context.CancelCauseFunc // moves this node runs (nil: held, not yet launched)

	// Tunables, the constants above unless a test sets them before use.
	deltaRecords int64
	maxDeltas    int
	fenceTTL     time.Duration
	fenceMargin  time.Duration
}

func newMoveRunner(s *Leader) *moveRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &moveRunner{s: s, ctx: ctx, cancel: cancel, inflight: map[string]context.CancelCauseFunc{},
		deltaRecords: moveDeltaRecords, maxDeltas: moveMaxDeltas, fenceTTL: moveFenceTTL, fenceMargin: moveFenceMargin}
}

// hold marks id as run by this node from before its record is proposed,
// so the loop never takes it for an orphan.
func (r *moveRunner) hold(id string) (release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight[id] = nil
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.inflight, id)
	}
}

// launch runs fn for move id in the background; interrupt(id) cancels
// its context with errMoveCancelled. The context also ends, with
// errLostLead, once this node no longer leads in the term it led in at
// launch: a deposed leader's runner stops, even when the lead comes back
// to this node in a later term, whose loop then takes the move over
// (adoptOrphans) rather than waiting on a call of the old term.
func (r *moveRunner) launch(id string, release func(), fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	term := r.s.LeadingTerm()
	r.mu.Lock()
	r.inflight[id] = cancel
	r.mu.Unlock()
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		defer release()
		defer cancel(nil)
		fn(ctx)
	}()
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(leadCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if r.s.LeadingTerm() != term {
					cancel(errLostLead)
					return
				}
			}
		}
	}()
}

// errLostLead ends a runner whose node no longer leads in its term.
var errLostLead = errors.New("this control node no longer leads")

// leadCheckEvery is how often a runner checks its node still leads.
const leadCheckEvery = 50 * time.Millisecond

func (r *moveRunner) running(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.inflight[id]
	return ok
}

// interrupt cancels move id if this node runs it.
func (r *moveRunner) interrupt(id string) {
	r.mu.Lock()
	cancel := r.inflight[id]
	r.mu.Unlock()
	if cancel != nil {
		cancel(errMoveCancelled)
	}
}

// stop cancels what runs and waits for it.
func (r *moveRunner) stop() {
	r.cancel()
	r.wg.Wait()
}
