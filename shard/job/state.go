package job

import (
	"fmt"

	"github.com/jobbie/jobbie/wire"
)

// State is a job's lifecycle state. See docs/job-states.md for the diagram.
type State uint8

// On-disk values, never renumber.
const (
	New       State = 0 // not stored yet: the state a job is created from
	Scheduled State = 1 // waiting for scheduled_at
	Pending   State = 2 // waiting for a worker
	Active    State = 3 // leased to a worker
	Completed State = 4 // acked
	Retrying  State = 5 // failed, waiting for its backoff
	Dead      State = 6 // retries exhausted or expired
	Cancelled State = 7 // cancelled by a user
	Held      State = 8 // waiting for the jobs it depends on (depends_on)
)

// MaxState is the highest state value; counts indexed by state have
// MaxState+1 entries.
const MaxState = Held

// States lists every state a stored job can be in, in value order.
func States() []State {
	return []State{Scheduled, Pending, Active, Completed, Retrying, Dead, Cancelled, Held}
}

var stateNames = map[State]string{
	Scheduled: wire.StateScheduled, Pending: wire.StatePending, Active: wire.StateActive, Completed: wire.StateCompleted,
	Retrying: wire.StateRetrying, Dead: wire.StateDead, Cancelled: wire.StateCancelled, Held: wire.StateHeld,
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// ParseState parses a state name.
func ParseState(name string) (State, error) {
	for s, n := range stateNames {
		if n == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown state %q", name)
}

// Terminal reports whether a job in s will not run again by itself.
func (s State) Terminal() bool { return s == Completed || s == Dead || s == Cancelled }

// transitions is the one table of allowed state changes. Every change of a
// job's state in the engine goes through Allowed, its creation included.
var transitions = map[State][]State{
	// See Initial.
	New:       {Scheduled, Pending, Held},
	Scheduled: {Pending, Dead, Cancelled},
	// Held: an AI budget holds it as it is about to be fetched.
	Pending: {Active, Dead, Cancelled, Held},
	// Pending: lease expired. Cancelled: a job marked cancelling settles
	// (ack, fail or lease expiry) as cancelled.
	Active:    {Completed, Retrying, Dead, Pending, Cancelled},
	Retrying:  {Pending, Dead, Cancelled},
	Completed: {Pending}, // manual retry
	Dead:      {Pending}, // manual retry
	Cancelled: {Pending}, // manual retry
	// Released when its dependencies completed (scheduled when its
	// scheduled_at is still ahead); cancelled when one failed; dead when
	// its TTL passed while it waited.
	Held: {Pending, Scheduled, Dead, Cancelled},
}

// Initial is the state a new job starts in: held while it waits for the
// jobs it depends on, scheduled while its scheduled_at (unix ns, 0 for
// none) is ahead of now, else pending.
func Initial(scheduledAt, now int64, waiting bool) State {
	switch {
	case waiting:
		return Held
	case scheduledAt > now:
		return Scheduled
	}
	return Pending
}

// Allowed reports whether a job may move from one state to another.
func Allowed(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// The decisions of job management, named as River names its state
// changes: each says, from a job's current state, what an operation does,
// or refuses it with a *ConflictError naming the state. Callers apply the
// decision through the transition table above.

// ConflictError refuses an operation the job's current state does not allow.
type ConflictError struct {
	Op    string // "retry", "cancel", "move", "delete"
	State State
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("cannot %s a job that is %s", e.Op, e.State)
}

// CancelDecision is what a cancel request does.
type CancelDecision uint8

const (
	CancelNow       CancelDecision = iota + 1 // → Cancelled at once
	CancelRequested                           // stays Active, marked; settles as Cancelled
)

// DecideCancel: scheduled, pending, retrying and held jobs are cancelled at once;
// an active job is marked cancelling (its worker learns it from its next
// heartbeat, and its ack, fail or lease expiry settles it as cancelled);
// a finished job cannot be cancelled.
func DecideCancel(s State) (CancelDecision, error) {
	switch s {
	case Scheduled, Pending, Retrying, Held:
		return CancelNow, nil
	case Active:
		return CancelRequested, nil
	}
	return 0, &ConflictError{Op: "cancel", State: s}
}

// DecideManualRetry: completed, dead and cancelled jobs go back to pending
// with their attempts reset; their error history is kept.
func DecideManualRetry(s State) (State, error) {
	if s == Completed || s == Dead || s == Cancelled {
		return Pending, nil
	}
	return 0, &ConflictError{Op: "retry", State: s}
}

// DecideMove: a job moves to another queue in any state but active (its
// worker holds it under the old queue).
func DecideMove(s State) error {
	if s == Active {
		return &ConflictError{Op: "move", State: s}
	}
	return nil
}

// DecideDelete: a job is deleted in any state but active; an active job
// must be cancelled first, so a worker never holds a job that is gone.
func DecideDelete(s State) error {
	if s == Active {
		return &ConflictError{Op: "delete", State: s}
	}
	return nil
}

// SettleAttempt decides where an attempt's outcome takes a job: the state
// its ack, fail or lease expiry would lead to, or Cancelled when a cancel
// was requested while it ran.
func SettleAttempt(cancelling bool, outcome State) State {
	if cancelling {
		return Cancelled
	}
	return outcome
}

// Retained reports whether a job in state s is pruned after the retention
// period: completed and cancelled jobs are; dead jobs stay until deleted.
func Retained(s State) bool { return s == Completed || s == Cancelled }
