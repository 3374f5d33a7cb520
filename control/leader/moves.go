package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Running live namespace moves, on the leader (docs/internal-api.md,
// "Live namespace moves"): begin on the target; the source's snapshot
// streamed into the target's apply; rounds of deltas while the last copy
// held more than deltaRecords records (at most maxDeltas); the source's
// fence; the final delta; end on the target; the switch (placement and
// state in one control entry); finish on the source, retried until it
// succeeds; completed. A failure or a cancel before the switch lifts the
// fence and aborts the target, and the move ends failed (or cancelled):
// the namespace stays where it was. Every shard call carries the move id
// as its token. The loop fails the moves an earlier leader left before
// their switch, the same way, and finishes those it left switched.

const (
	movePath = "/internal/v1/move/"
	// moveDeltaRecords: a copy of more records than this is followed by
	// another delta round before the fence.
	moveDeltaRecords = 1000
	// moveMaxDeltas bounds the delta rounds before the fence.
	moveMaxDeltas = 5
	// moveFenceTTL is the fence asked of the source: it lapses by itself
	// if control stops before lifting it.
	moveFenceTTL = 30 * time.Second
	// moveFenceMargin is the part of the fence's ttl the switch must
	// leave: past ttl-margin, the move fails rather than switch when the
	// source may be taking writes again.
	moveFenceMargin = 5 * time.Second
	// moveCleanupTimeout bounds lifting the fence and aborting the target.
	moveCleanupTimeout = 30 * time.Second
	// moveCallTimeout bounds one call of a step other than a copy.
	moveCallTimeout = 30 * time.Second
)

// Errors of moves control ended.
const (
	MoveLeaderChanged = "interrupted by a control leader change"
	MoveStopped       = "interrupted: the control node stopped while it ran"
)

// errMoveCancelled is the cause of a move's context cancelled by the
// operator.
var errMoveCancelled = errors.New("cancelled by the operator")

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

// run drives move m from where its record stands.
func (r *moveRunner) run(ctx context.Context, m state.MoveRecord) {
	if m.State != wire.MoveSwitched {
		cctx, cancel := context.WithTimeout(ctx, maxRunTime)
		err := r.copy(cctx, &m)
		cancel()
		if err != nil {
			if errors.Is(err, errSwitchUnknown) {
				// The switch may have been applied: the record says, and
				// the loop acts on it once this node no longer runs it.
				r.s.log.Warn("control: move switch outcome unknown", "move", m.ID, "err", err)
				return
			}
			if context.Cause(ctx) == errLostLead {
				// The next leader fails it as interrupted and cleans up
				// (adoptOrphans): one cleanup, one account of it.
				r.s.log.Warn("control: move interrupted: this node no longer leads", "move", m.ID, "err", err)
				return
			}
			r.fail(ctx, m, err)
			return
		}
	}
	r.finish(ctx, m)
}

// errSwitchUnknown is a switch proposal whose outcome is unknown.
var errSwitchUnknown = errors.New("the switch's outcome is unknown")

// copy runs m up to and including its switch; m follows the record.
func (r *moveRunner) copy(ctx context.Context, m *state.MoveRecord) error {
	if err := r.call(ctx, *m, m.ToShard, "begin", nil, nil); err != nil {
		return fmt.Errorf("begin on target shard %s: %w", m.ToShard, err)
	}
	last, err := r.transfer(ctx, m, "snapshot")
	if err != nil {
		return err
	}
	if err := r.progress(ctx, m, state.MoveCopied); err != nil {
		return err
	}
	for deltas := 0; last > r.deltaRecords && deltas < r.maxDeltas; deltas++ {
		if last, err = r.transfer(ctx, m, "delta"); err != nil {
			return err
		}
		m.Rounds++
		if err := r.progress(ctx, m, state.MoveCopied); err != nil {
			return err
		}
	}
	fencedAt := time.Now()
	ttl := r.fenceTTL.Milliseconds()
	if err := r.call(ctx, *m, m.FromShard, "fence", map[string]int64{"ttl_ms": ttl}, nil); err != nil {
		return fmt.Errorf("fence on source shard %s: %w", m.FromShard, err)
	}
	// The rest must end before the fence could lapse.
	deadline := fencedAt.Add(r.fenceTTL - r.fenceMargin)
	fctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := r.progress(fctx, m, state.MoveFence); err != nil {
		return err
	}
	if _, err := r.transfer(fctx, m, "delta"); err != nil {
		return fenceErr(fctx, err)
	}
	m.Rounds++
	// From here a cancel is refused: the move goes on to end the target
	// and switch. A failure still aborts, which removes the target's copy
	// while no client's command has reached it (a 409 once one did).
	if err := r.commit(fctx, m); err != nil {
		return fenceErr(fctx, err)
	}
	if err := r.call(fctx, *m, m.ToShard, "end", nil, nil); err != nil {
		return fenceErr(fctx, fmt.Errorf("end on target shard %s: %w", m.ToShard, err))
	}
	// A call may succeed past the deadline: its answer and the deadline's
	// timer can be ready at once on a starved machine, and either wins.
	if late := time.Since(deadline); late >= 0 {
		return fmt.Errorf("the cut-over did not end within the fence's time: the target ended %s past it", late.Round(time.Millisecond))
	}
	// The fence outlasts fctx by fenceMargin: time enough for one entry.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), r.fenceMargin)
	defer scancel()
	sw, err := r.s.SwitchMove(sctx, &state.SwitchMoveCmd{ID: m.ID, Rounds: m.Rounds, Records: m.Records, Bytes: m.Bytes})
	if err != nil {
		if refused(err) {
			return fmt.Errorf("switch: %w", err)
		}
		return fmt.Errorf("%w: %v", errSwitchUnknown, err)
	}
	*m = sw
	r.s.log.Info("control: namespace moved", "tenant", m.TenantID, "namespace", m.Namespace, "from", m.FromShard, "to", m.ToShard,
		"move", m.ID, "pause_ms", m.PauseMS, "records", m.Records, "rounds", m.Rounds)
	return nil
}

// commit records that m's target is about to end: cancels are refused
// from this entry on.
func (r *moveRunner) commit(ctx context.Context, m *state.MoveRecord) error {
	return r.progress(ctx, m, state.MoveCommit)
}

// fenceErr says so when err is the fence's deadline passing.
func fenceErr(fctx context.Context, err error) error {
	if errors.Is(fctx.Err(), context.DeadlineExceeded) && context.Cause(fctx) == context.DeadlineExceeded {
		return fmt.Errorf("the cut-over did not end within the fence's time: %w", err)
	}
	return err
}

// refused reports whether a proposal was refused by its handler (it
// changed nothing), not lost to replication.
func refused(err error) bool {
	c := apierr.CodeOf(err)
	return c == apierr.Conflict || c == apierr.NotFound || c == apierr.BadRequest
}

// progress records m's step; a refusal (a cancel asked) or a failure
// fails the move.
func (r *moveRunner) progress(ctx context.Context, m *state.MoveRecord, step state.MoveStep) error {
	got, err := r.s.RecordMove(ctx, *m, step)
	if err != nil {
		return fmt.Errorf("record progress: %w", err)
	}
	*m = got
	return nil
}

// transfer streams the source's snapshot or delta into the target's
// apply, adds what was sent to m, and returns the records it held.
func (r *moveRunner) transfer(ctx context.Context, m *state.MoveRecord, what string) (int64, error) {
	res, sent, err := r.copyStream(ctx, *m, what)
	if err != nil {
		return 0, fmt.Errorf("copy the %s of source shard %s to target shard %s: %w", what, m.FromShard, m.ToShard, err)
	}
	n := res.Records + res.Deletes
	m.Records += n
	m.Bytes += sent
	return n, nil
}

// copyStream reads the source's stream and posts it to the target's
// apply, at the node that answered begin (the route's current node):
// once, since the stream cannot be read again, so another node's 503
// fails the copy.
func (r *moveRunner) copyStream(ctx context.Context, m state.MoveRecord, what string) (moveApplied, int64, error) {
	var res moveApplied
	from, err := r.s.target(m.FromShard, m.Namespace)
	if err != nil {
		return res, 0, err
	}
	to, err := r.s.target(m.ToShard, m.Namespace)
	if err != nil {
		return res, 0, err
	}
	src, err := r.s.shards.send(ctx, from, shardclient.Request{Method: http.MethodGet, Path: movePath + what, Header: moveHeader(m)})
	if err != nil {
		return res, 0, err
	}
	defer src.Body.Close()
	body := &countingReader{r: src.Body}
	h := moveHeader(m)
	h.Set("Content-Type", wire.BackupContentType)
	resp, err := r.s.shards.send(ctx, to, shardclient.Request{Method: http.MethodPost, Path: movePath + "apply", Header: h, Body: once(body)})
	if err != nil {
		return res, body.n, fmt.Errorf("apply on target: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxShardError))
	if err != nil {
		return res, body.n, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, body.n, fmt.Errorf("apply on target: undecodable answer: %w", err)
	}
	return res, body.n, nil
}

// moveApplied is a target's answer to apply.
type moveApplied struct {
	Records int64 `json:"records"`
	Deletes int64 `json:"deletes"`
	Bytes   int64 `json:"bytes"`
}

// moveHeader names m's namespace on the shard and m's token.
func moveHeader(m state.MoveRecord) http.Header {
	h := http.Header{}
	h.Set(wire.ShardNamespaceHeader, tenancy.ShardNamespace(m.TenantID, m.Namespace))
	h.Set(wire.MoveTokenHeader, m.ID)
	return h
}

// call posts a small JSON body (nil: none) to shard's move route step,
// on its leader.
func (r *moveRunner) call(ctx context.Context, m state.MoveRecord, shard, step string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, moveCallTimeout)
	defer cancel()
	tg, err := r.s.target(shard, m.Namespace)
	if err != nil {
		return err
	}
	return r.s.shards.call(ctx, tg, http.MethodPost, movePath+step, moveHeader(m), in, out)
}

// fail cleans up after m failed or was cancelled before its switch (the
// fence lifted, the target's copy aborted) and ends it.
func (r *moveRunner) fail(ctx context.Context, m state.MoveRecord, cause error) {
	why := cause.Error()
	switch {
	case context.Cause(ctx) == errMoveCancelled:
		why = errMoveCancelled.Error()
	case r.ctx.Err() != nil:
		why = MoveStopped
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), moveCleanupTimeout)
	if r.ctx.Err() != nil {
		cancel()
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	}
	// Both at once: they touch different shards.
	var unfence, abort error
	var wg sync.WaitGroup
	wg.Go(func() {
		unfence = r.retry(cctx, func(ctx context.Context) error { return r.call(ctx, m, m.FromShard, "unfence", nil, nil) })
	})
	wg.Go(func() {
		abort = r.retry(cctx, func(ctx context.Context) error { return r.call(ctx, m, m.ToShard, "abort", nil, nil) })
	})
	wg.Wait()
	cancel()
	if unfence != nil {
		why += fmt.Sprintf("; cleanup: unfence on source shard %s: %v", m.FromShard, unfence)
	}
	if abort != nil {
		why += fmt.Sprintf("; cleanup: abort on target shard %s: %v", m.ToShard, abort)
	}
	why = strings.ReplaceAll(why, "\n", "; ") // errors.Join's lines: the record's error is one line
	r.s.log.Warn("control: move failed", "tenant", m.TenantID, "namespace", m.Namespace, "move", m.ID, "err", why)
	r.s.backups.finish(r.ctx, func(ctx context.Context) error {
		_, err := r.s.EndMove(ctx, &state.EndMoveCmd{ID: m.ID, Failed: true, Error: why})
		if refused(err) {
			return nil // switched or ended meanwhile: nothing to record
		}
		return err
	})
}

// retry runs fn a few times, a second apart, until it succeeds or ctx ends.
func (r *moveRunner) retry(ctx context.Context, fn func(context.Context) error) error {
	var err error
	for range 3 {
		if err = fn(ctx); err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}

// finish removes the source's copy of switched move m and completes it,
// retrying until both succeed, this node stops or no longer leads (the
// leader then finishes it). ctx is the move's: an operator's cancel
// cannot reach a switched move (cancel refuses one), losing the lead
// ends it here.
func (r *moveRunner) finish(ctx context.Context, m state.MoveRecord) {
	wait := 200 * time.Millisecond
	for {
		err := r.call(ctx, m, m.FromShard, "finish", wire.NamespaceMoveRequest{ToShard: m.ToShard}, nil)
		if err == nil {
			_, err = r.s.EndMove(ctx, &state.EndMoveCmd{ID: m.ID})
			if err == nil || refused(err) {
				return
			}
		}
		if !r.s.IsLeader() {
			return // the leader's loop finishes it
		}
		r.s.log.Warn("control: finish a switched move; retrying", "move", m.ID, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// runLoop takes over, every backupTick while this node leads and once it
// has led for Config.BackupOrphanAfter, the moves no runner of this node
// holds: an earlier leader's.
func (r *moveRunner) runLoop(ctx context.Context) {
	r.s.whileLeading(ctx, func(ledLong bool) {
		if ledLong {
			r.adoptOrphans()
		}
	})
}

// adoptOrphans runs every move that has not ended and that this node does
// not run: a switched one is finished, any other failed and cleaned up.
func (r *moveRunner) adoptOrphans() {
	var open []state.MoveRecord
	err := r.s.View(func(rd pebble.Reader) error {
		all, err := state.ListMoves(rd)
		for _, m := range all {
			if !m.Ended() {
				open = append(open, m)
			}
		}
		return err
	})
	if err != nil {
		r.s.log.Warn("control: move loop: read state", "err", err)
		return
	}
	for _, m := range open {
		if r.running(m.ID) || r.ctx.Err() != nil {
			continue
		}
		release := r.hold(m.ID)
		r.launch(m.ID, release, func(ctx context.Context) {
			if m.State == wire.MoveSwitched {
				r.finish(ctx, m)
				return
			}
			r.fail(ctx, m, errors.New(MoveLeaderChanged))
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
