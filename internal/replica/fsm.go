package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
)

// SystemPrefix starts every key the replica itself owns. State machines
// must not write keys that begin with it.
const SystemPrefix = 0x00

// appliedKey holds the last applied index and the clock of that entry.
var appliedKey = []byte{SystemPrefix, SystemPrefix, 'a', 'p', 'p', 'l', 'i', 'e', 'd'}

// fsm adapts a Registry to raft.BatchingFSM over a Pebble database.
// Snapshots and restores are in snapshot.go.
type fsm struct {
	db       *pebble.DB
	reg      *Registry
	tmp      string // scratch space for checkpoints and restores
	applied  atomic.Uint64
	restores atomic.Uint64
	redos    atomic.Uint64 // groups applied again after a refused command had written
	local    bool          // applied by Local: no Raft log, so no applied index is recorded
	seeBatch func([]byte)  // Local.SeeBatches: each group's batch before it commits
	lastNow  int64         // under mu
	// observer is told of each applied group: its commands, its entries of
	// each kind, and the time it took.
	observer func(cmds, effects, commands int, d time.Duration)
	// effectsApplied counts effects entries applied (Status.EffectsApplied).
	effectsApplied atomic.Uint64

	// mu is held by the apply, by the leader's evaluation of its next
	// entry and by a restore: they share the state machine's caches.
	mu  sync.Mutex
	own *evaluation // the entry this node evaluated and proposed, until it applies or fails (effects.go)
	// openEvals counts the evaluations' batches left open: at most own's,
	// none once the node closes (tests check that none leaks).
	openEvals int
	zbuf      []byte // the evaluation's compression scratch (effects.go)
	sorter    batchSorter
	// stale: an entry applied as effects ran no handler here, so the
	// caches may hold older state; they are reset before handlers next run.
	stale bool

	waitMu sync.Mutex
	waitCh chan struct{} // closed when applied moves; nil while nobody waits
}

func newFSM(db *pebble.DB, reg *Registry, tmp string) (*fsm, error) {
	f := &fsm{db: db, reg: reg, tmp: tmp}
	if err := f.loadApplied(); err != nil {
		return nil, err
	}
	return f, nil
}

// loadApplied reads the applied index and clock from the state.
func (f *fsm) loadApplied() error {
	index, now, err := readApplied(f.db)
	if err != nil {
		return err
	}
	f.applied.Store(index)
	f.lastNow = now
	return nil
}

// readApplied reads the applied index and the clock of that entry from r
// (zero when nothing was applied).
func readApplied(r pebble.Reader) (index uint64, now int64, err error) {
	v, closer, err := r.Get(appliedKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		return 0, 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("replica: read applied index: %w", err)
	}
	defer closer.Close()
	if len(v) == 16 {
		index, now = binary.BigEndian.Uint64(v), int64(binary.BigEndian.Uint64(v[8:]))
	}
	return index, now, nil
}

// AppliedIndexOf reads the index of the last entry applied to the state
// r holds. It is written in the same batch as each entry's effects, so a
// snapshot's value is the index of exactly the state it holds; 0 when
// nothing was applied (or the state was applied by Local, without a log).
func AppliedIndexOf(r pebble.Reader) (uint64, error) {
	index, _, err := readApplied(r)
	return index, err
}

// appliedWait returns a channel closed the next time applied moves.
func (f *fsm) appliedWait() <-chan struct{} {
	f.waitMu.Lock()
	defer f.waitMu.Unlock()
	if f.waitCh == nil {
		f.waitCh = make(chan struct{})
	}
	return f.waitCh
}

// appliedMoved wakes WaitApplied callers; without any it costs a lock.
func (f *fsm) appliedMoved() {
	f.waitMu.Lock()
	if f.waitCh != nil {
		close(f.waitCh)
		f.waitCh = nil
	}
	f.waitMu.Unlock()
}

func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies consecutive committed entries: each run of commands
// entries in one Pebble batch, each effects entry (effects.go) alone.
// Each entry's result is a []Outcome, one per command, or the error that
// refused all of it.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	start := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	results := make([]any, len(logs))
	var run []groupEntry
	var at []int // index in logs of each entry of run
	ncmds, applied, neffects, ncommands := 0, false, 0, 0
	flush := func() {
		if len(run) == 0 {
			return
		}
		outs, n := f.applyGroup(run)
		for k, i := range at {
			results[i] = outs[k]
		}
		ncmds += n
		run, at = run[:0], at[:0]
	}
	for i, l := range logs {
		if l.Type != raft.LogCommand || l.Index <= f.applied.Load() {
			continue
		}
		applied = true
		if len(l.Data) > 0 && l.Data[0] == entryEffects {
			flush()
			e, err := decodeEffects(l.Data)
			if err != nil {
				panic(fmt.Sprintf("replica: entry %d: %v", l.Index, err))
			}
			results[i] = f.applyEffects(l, e)
			ncmds += e.ncmds
			neffects++
			continue
		}
		now, cmds, err := decodeEntry(l.Data)
		if err != nil {
			panic(fmt.Sprintf("replica: entry %d: %v", l.Index, err))
		}
		if f.own != nil { // another leader's entry: this node's evaluation can no longer apply
			f.dropOwn()
		}
		run = append(run, groupEntry{index: l.Index, now: now, cmds: cmds})
		at = append(at, i)
		ncommands++
	}
	flush()
	if neffects > 0 {
		f.effectsApplied.Add(uint64(neffects))
	}
	if applied && f.observer != nil {
		f.observer(ncmds, neffects, ncommands, time.Since(start))
	}
	return results
}

// groupEntry is one log entry of a group: its index, the leader's clock
// and its commands.
type groupEntry struct {
	index uint64
	now   int64
	cmds  [][]byte
}

// cmdRef names one command of a group: entry and position.
type cmdRef struct{ entry, cmd int }

// applyGroup applies entries in one batch and commits it with the last
// applied index (see evalGroup for refused commands).
func (f *fsm) applyGroup(entries []groupEntry) (outs [][]Outcome, ncmds int) {
	ev := f.evalGroup(entries)
	last := entries[len(entries)-1].index
	if !f.local {
		f.setApplied(ev.b, last, ev.lastNow)
	}
	ev.b = f.sorter.sorted(f.db, ev.b)
	if f.seeBatch != nil {
		f.seeBatch(ev.b.Repr())
	}
	if err := ev.b.Commit(pebble.NoSync); err != nil {
		panic(fmt.Sprintf("replica: commit entry %d: %v", last, err))
	}
	ev.b.Close()
	f.lastNow = ev.lastNow
	f.applied.Store(last)
	f.appliedMoved()
	for _, fn := range ev.after {
		fn()
	}
	return ev.outs, ev.ncmds
}

// setApplied writes the applied index and the clock of that entry into b.
func (f *fsm) setApplied(b *pebble.Batch, index uint64, now int64) {
	var v [16]byte
	binary.BigEndian.PutUint64(v[:8], index)
	binary.BigEndian.PutUint64(v[8:], uint64(now))
	if err := b.Set(appliedKey, v[:], nil); err != nil {
		panic(fmt.Sprintf("replica: set applied: %v", err))
	}
}

// evaluated is a group run into an uncommitted batch: the batch (its
// before-commit callbacks done), each entry's outcomes, the after-commit
// callbacks, the command count and the clock of the last entry.
type evaluated struct {
	b       *pebble.Batch
	outs    [][]Outcome
	after   []func()
	ncmds   int
	lastNow int64
}

// evalGroup runs entries' commands into one new batch over the committed
// state. A refused command must leave nothing: one that refused before
// writing (the usual case) only loses the commit callbacks it registered;
// one that had written to the batch or marked in-memory state dirty makes
// the whole group start again from the committed state, in a new batch
// with the state machine's caches reset, with that command refused
// without being applied. Which commands fail is decided by the commands
// and the state alone, so every node ends in the same state.
func (f *fsm) evalGroup(entries []groupEntry) evaluated {
	if f.stale {
		f.stale = false
		f.reg.reset()
	}
	refused := map[cmdRef]error{}
	for {
		ev, redo := f.tryGroup(entries, refused, f.lastNow)
		if !redo {
			return ev
		}
		f.redos.Add(1)
		f.reg.reset()
	}
}

// tryGroup is one attempt of evalGroup; redo reports that a refused
// command had written, was added to refused, and the group must start
// again.
func (f *fsm) tryGroup(entries []groupEntry, refused map[cmdRef]error, lastNow int64) (ev evaluated, redo bool) {
	b := f.db.NewIndexedBatch()
	txs := make([]*Tx, len(entries))
	outs := make([][]Outcome, len(entries))
	ncmds := 0
	for i, en := range entries {
		now := en.now
		if now < lastNow { // a new leader's clock may lag; state time never goes back
			now = lastNow
		}
		lastNow = now
		tx := &Tx{Batch: b, Now: time.Unix(0, now).UTC(), Index: en.index}
		txs[i] = tx
		out := make([]Outcome, len(en.cmds))
		for j, c := range en.cmds {
			if err, ok := refused[cmdRef{i, j}]; ok {
				out[j] = Outcome{Err: err}
				continue
			}
			count, nafter, nbefore := b.Count(), len(tx.after), len(tx.before)
			tx.dirty = false
			v, err := f.reg.Apply(tx, c)
			if err == nil {
				out[j] = Outcome{Value: v}
				continue
			}
			if b.Count() != count || tx.dirty {
				refused[cmdRef{i, j}] = err
				b.Close()
				return evaluated{}, true
			}
			tx.after, tx.before = tx.after[:nafter], tx.before[:nbefore]
			out[j] = Outcome{Err: err}
		}
		outs[i] = out
		ncmds += len(en.cmds)
	}
	var after []func()
	for _, tx := range txs {
		tx.RunBeforeCommit()
		after = append(after, tx.after...)
	}
	return evaluated{b: b, outs: outs, after: after, ncmds: ncmds, lastNow: lastNow}, false
}
