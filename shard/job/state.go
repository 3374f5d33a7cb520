package job

import "fmt"

// State is a job's lifecycle state. See docs/job-states.md for the diagram.
type State uint8

// On-disk values, never renumber.
const (
	Scheduled State = 1 // waiting for scheduled_at
	Pending   State = 2 // waiting for a worker
	Active    State = 3 // leased to a worker
	Completed State = 4 // acked
	Retrying  State = 5 // failed, waiting for its backoff
	Dead      State = 6 // retries exhausted or expired
	Cancelled State = 7 // cancelled by a user
)

var stateNames = map[State]string{
	Scheduled: "scheduled", Pending: "pending", Active: "active", Completed: "completed",
	Retrying: "retrying", Dead: "dead", Cancelled: "cancelled",
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
// job's state in the engine goes through Allowed.
var transitions = map[State][]State{
	Scheduled: {Pending, Dead, Cancelled},
	Pending:   {Active, Dead, Cancelled},
	Active:    {Completed, Retrying, Dead, Pending, Cancelled}, // Pending: lease expired
	Retrying:  {Pending, Dead, Cancelled},
	Completed: {Pending}, // manual retry
	Dead:      {Pending}, // manual retry
	Cancelled: {Pending}, // manual retry
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
