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
	dirty  bool // the running command changed in-memory state (MarkDirty)
}

// NewTx returns a transaction over batch at the given clock and index. The
// replica makes one per entry; tests of a state machine's parts make their
// own.
func NewTx(b *pebble.Batch, now time.Time, index uint64) *Tx {
	return &Tx{Batch: b, Now: now, Index: index}
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

// RunAfterCommit runs the registered after-commit functions, for tests
// that commit a batch of their own (the replica runs them for every entry
// it applies).
func (tx *Tx) RunAfterCommit() {
	for _, f := range tx.after {
		f()
	}
	tx.after = nil
}

// MarkDirty tells the replica that the running command changed in-memory
// state derived from the store (a cache a later commit flushes). A command
// that fails after writing to the batch or marking itself dirty is undone
// by applying its group again without it (see fsm.applyGroup).
func (tx *Tx) MarkDirty() { tx.dirty = true }

// Handler applies one command's payload and returns its result, or the
// business failure (not found, lease lost) that refused it. A refused
// command leaves nothing behind: the replica drops its writes, its
// commit callbacks and its in-memory changes.
type Handler func(tx *Tx, payload []byte) (any, error)

// Registry maps command types to handlers.
type Registry struct {
	handlers [256]Handler
	names    [256]string
	onReset  []func()
	applied  []func()
	format   uint32 // the store format its writes assume (storeformat.go)
}

// OnReset registers f to run when the state changed under the state
// machine's in-memory caches: a snapshot replaced it, or a group of
// entries is being applied again after a refused command had already
// written (its writes were discarded with the batch). f drops whatever
// the caches derived from the old state.
func (r *Registry) OnReset(f func()) { r.onReset = append(r.onReset, f) }

// OnEffectsApplied registers f to run after this member applied an entry
// as the effects another member evaluated (Config.Effects): no handler,
// observer or commit callback ran here for it, so a node-local view they
// feed (a stream waiting for news, a cache read outside the apply) learns
// only that the state moved. It runs on the apply, after the commit; it
// must be quick. The caches only handlers read are reset (OnReset) before
// handlers next run.
func (r *Registry) OnEffectsApplied(f func()) { r.applied = append(r.applied, f) }

func (r *Registry) effectsApplied() {
	for _, f := range r.applied {
		f()
	}
}

func (r *Registry) reset() {
	for _, f := range r.onReset {
		f()
	}
}

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

// Types lists the registered command types in order.
func (r *Registry) Types() []CommandType {
	var out []CommandType
	for t, h := range r.handlers {
		if h != nil {
			out = append(out, CommandType(t))
		}
	}
	return out
}

// Apply dispatches one command. An undecodable command is a divergence:
// every node must apply the same log the same way, so it panics. Apply
// alone does not undo a refused command's writes: the replica's group
// apply (and Local) do.
func (r *Registry) Apply(tx *Tx, cmd []byte) (any, error) {
	if len(cmd) == 0 {
		panic("replica: empty command in log")
	}
	t := CommandType(cmd[0])
	h := r.handlers[t]
	if h == nil {
		if t&IgnoreUnknown != 0 {
			return nil, nil
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
