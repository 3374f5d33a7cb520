package replica

import (
	"time"

	"github.com/cockroachdb/pebble"
)

// Local applies commands to a Pebble database without Raft, through the
// same group apply a node uses (one batch per call, refused commands
// dropped): for tests and benchmarks of a state machine, and for building
// a state a node then opens. Its entries belong to no Raft log, so it
// records no applied index. It is not safe for concurrent use.
type Local struct {
	f     *fsm
	index uint64
}

// NewLocal returns a Local over db, which it does not own.
func NewLocal(db *pebble.DB, reg *Registry) (*Local, error) {
	f, err := newFSM(db, reg, "")
	if err != nil {
		return nil, err
	}
	f.local = true
	return &Local{f: f}, nil
}

// Apply applies cmds as one log entry stamped now and returns one outcome
// per command.
func (l *Local) Apply(now time.Time, cmds ...[]byte) []Outcome {
	l.index++
	outs, _ := l.f.applyGroup([]groupEntry{{index: l.index, now: now.UnixNano(), cmds: cmds}})
	return outs[0]
}

// SeeBatches has see called with the encoded Pebble batch of every group
// Local applies from now on (nil stops it), just before it commits: the
// bytes are the batch's and valid only during the call. Benchmarks use it
// to weigh what a member would pay to apply a group's effects instead of
// its commands.
func (l *Local) SeeBatches(see func(repr []byte)) { l.f.seeBatch = see }

// Redos is how many groups were applied again because a refused command
// had written (see fsm.applyGroup); tests of a state machine expect none.
func (l *Local) Redos() uint64 { return l.f.redos.Load() }
