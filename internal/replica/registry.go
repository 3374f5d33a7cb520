package replica

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"
)

// CommandType is the first byte of every command. Types are append-only:
// a type, once shipped, keeps its number and meaning forever.
type CommandType uint8

// IgnoreUnknown marks a command type that an older node, which does not
// know it, may skip without diverging (it only adds optional state).
const IgnoreUnknown CommandType = 0x80

// Tx is what a command handler applies to: the entry's Pebble batch
// (indexed, so reads see earlier writes of the same entry), the leader's
// timestamp and the log index.
type Tx struct {
	*pebble.Batch
	Now    time.Time
	Index  uint64
	after  []func()
	before []func()
}

// BeforeCommit registers f to run after every command of the batch was
// applied and before it commits, so a state machine can write state it
// accumulated across commands once.
func (tx *Tx) BeforeCommit(f func()) { tx.before = append(tx.before, f) }

// RunBeforeCommit runs the registered before-commit functions. The replica
// calls it; tests that apply commands to a batch of their own do too.
func (tx *Tx) RunBeforeCommit() {
	for _, f := range tx.before {
		f()
	}
	tx.before = nil
}

// AfterCommit registers f to run once the entry's batch has committed, for
// effects outside the state (waking long-poll waiters, metrics).
func (tx *Tx) AfterCommit(f func()) { tx.after = append(tx.after, f) }

// RunAfterCommit runs the registered after-commit functions, for tests and
// benchmarks that commit a batch of their own (the replica runs them for
// every entry it applies).
func (tx *Tx) RunAfterCommit() {
	for _, f := range tx.after {
		f()
	}
	tx.after = nil
}

// Handler applies one command's payload. It returns the command's result:
// a value, or an error value for a business failure (not found, lease
// lost). Such failures must leave no writes behind; a handler that fails
// halfway must undo or avoid its writes before returning.
type Handler func(tx *Tx, payload []byte) any

// Registry maps command types to handlers.
type Registry struct {
	handlers  [256]Handler
	names     [256]string
	onRestore []func()
}

// OnRestore registers f to run after the state was replaced by a snapshot,
// so a state machine can drop in-memory caches derived from the old state.
func (r *Registry) OnRestore(f func()) { r.onRestore = append(r.onRestore, f) }

// Register adds a handler; registering a type twice is a programming error.
func (r *Registry) Register(t CommandType, name string, h Handler) {
	if r.handlers[t] != nil {
		panic(fmt.Sprintf("replica: command type %d registered twice (%s, %s)", t, r.names[t], name))
	}
	r.handlers[t] = h
	r.names[t] = name
}

// Name is the registered name of a command type.
func (r *Registry) Name(t CommandType) string { return r.names[t] }

// NewTx returns a transaction over batch at the given clock and index. The
// replica makes one per entry; tests of state machines make their own.
func NewTx(b *pebble.Batch, now time.Time, index uint64) *Tx {
	return &Tx{Batch: b, Now: now, Index: index}
}

// Apply dispatches one command. An undecodable command is a divergence:
// every node must apply the same log the same way, so it panics.
func (r *Registry) Apply(tx *Tx, cmd []byte) any {
	if len(cmd) == 0 {
		panic("replica: empty command in log")
	}
	t := CommandType(cmd[0])
	h := r.handlers[t]
	if h == nil {
		if t&IgnoreUnknown != 0 {
			return nil
		}
		panic(fmt.Sprintf("replica: unknown command type %d in log", t))
	}
	return h(tx, cmd[1:])
}

// Command builds a command from its type and payload.
func Command(t CommandType, payload []byte) []byte {
	out := make([]byte, 0, 1+len(payload))
	out = append(out, byte(t))
	return append(out, payload...)
}
