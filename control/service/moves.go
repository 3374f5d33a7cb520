package service

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Live namespace moves, as the operator API serves them. Starting one
// records it; the leader's move runner (move_run.go) drives it after the
// answer.

// MoveFilter narrows a list of moves; empty fields match everything.
type MoveFilter struct {
	Tenant, Namespace, State string
}

// StartMove starts moving namespace ns of tenant tid to shard to: the
// answer is the move as recorded (copying); the leader runs it after.
func (s *Service) StartMove(ctx context.Context, tid, ns, to string) (wire.Move, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return wire.Move{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if tenancy.ValidateNamespace(ns) != nil {
		return wire.Move{}, apierr.New(apierr.NotFound, "namespace %q not found", ns)
	}
	switch {
	case to == "":
		return wire.Move{}, apierr.Field("to_shard", "to_shard is required: the id of the shard to move the namespace to")
	case !ShardIDRE.MatchString(to):
		return wire.Move{}, apierr.Field("to_shard", "shard %q must be 1-63 letters, digits, '.', '_' or '-'", to)
	}
	c := state.StartMoveCmd{ID: NewID(state.MoveIDPrefix), Tenant: tid, Namespace: ns, ToShard: to, StaticShards: s.Placement().Shards}
	release := s.runner.HoldMove(c.ID)
	m, err := propose(ctx, s, state.OpStartMove, &c)
	if err != nil {
		release()
		return wire.Move{}, err
	}
	s.runner.RunMove(m, release)
	return m.Move, nil
}

// Moves lists the moves f matches, newest first.
func (s *Service) Moves(ctx context.Context, f MoveFilter) ([]wire.Move, error) {
	if f.Tenant != "" && tenancy.ValidateTenantID(f.Tenant) != nil {
		return nil, apierr.Field("tenant", "tenant %q is not a tenant id", f.Tenant)
	}
	if f.Namespace != "" {
		if err := tenancy.ValidateNamespace(f.Namespace); err != nil {
			return nil, apierr.Field("namespace", "%v", err)
		}
	}
	if f.State != "" && !slices.Contains(state.MoveStates, f.State) {
		return nil, apierr.Field("state", "state must be one of %s, not %q", strings.Join(state.MoveStates, ", "), f.State)
	}
	all, err := ViewValue(s, state.ListMoves)
	if err != nil {
		return nil, err
	}
	out := []wire.Move{}
	for _, m := range slices.Backward(all) {
		if (f.Tenant == "" || m.TenantID == f.Tenant) && (f.Namespace == "" || m.Namespace == f.Namespace) && (f.State == "" || m.State == f.State) {
			out = append(out, m.Move)
		}
	}
	return out, nil
}

// Move returns one move.
func (s *Service) Move(ctx context.Context, id string) (wire.Move, error) {
	m, err := s.moveRecord(id)
	return m.Move, err
}

func (s *Service) moveRecord(id string) (state.MoveRecord, error) {
	rest, ok := strings.CutPrefix(id, state.MoveIDPrefix)
	if _, err := ulid.ParseStrict(strings.ToUpper(rest)); !ok || err != nil {
		return state.MoveRecord{}, apierr.New(apierr.NotFound, "move %q not found", id)
	}
	return ViewValue(s, func(r pebble.Reader) (state.MoveRecord, error) { return state.LoadMove(r, id) })
}

// cancelWait is how long a cancel waits for the runner to clean up before
// it answers with the move still ending.
const cancelWait = 8 * time.Second

// CancelMove cancels a move that has not switched (409 once it has): the
// runner stops it, removes the target's copy and lifts the source's fence.
// It answers the move once cancelled (done), or as it is after cancelWait
// if the cleanup takes longer.
func (s *Service) CancelMove(ctx context.Context, id string) (wire.Move, bool, error) {
	if _, err := s.moveRecord(id); err != nil {
		return wire.Move{}, false, err
	}
	m, err := propose(ctx, s, state.OpCancelMove, &state.CancelMoveCmd{ID: id})
	if err != nil {
		return wire.Move{}, false, err
	}
	if m.Ended() {
		return m.Move, true, nil
	}
	s.runner.InterruptMove(id)
	wait, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-wait.Done():
			return m.Move, false, nil
		case <-t.C:
		}
		if cur, err := s.moveRecord(id); err == nil {
			m = cur
			if m.Ended() {
				return m.Move, true, nil
			}
		}
	}
}
