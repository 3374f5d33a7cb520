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
	lastNow  int64 // only touched by raft's FSM goroutine
	observer func(cmds int, d time.Duration)

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
	f.applied.Store(0)
	f.lastNow = 0
	v, closer, err := f.db.Get(appliedKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return fmt.Errorf("replica: read applied index: %w", err)
	default:
		if len(v) == 16 {
			f.applied.Store(binary.BigEndian.Uint64(v))
			f.lastNow = int64(binary.BigEndian.Uint64(v[8:]))
		}
		closer.Close()
	}
	return nil
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

// ApplyBatch applies consecutive committed entries in one Pebble batch.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	start := time.Now()
	results := make([]any, len(logs))
	b := f.db.NewIndexedBatch()
	var after []func()
	var txs []*Tx
	last, ncmds := uint64(0), 0
	for i, l := range logs {
		if l.Type != raft.LogCommand || l.Index <= f.applied.Load() {
			continue
		}
		now, cmds, err := decodeEntry(l.Data)
		if err != nil {
			panic(fmt.Sprintf("replica: entry %d: %v", l.Index, err))
		}
		if now < f.lastNow { // a new leader's clock may lag; state time never goes back
			now = f.lastNow
		}
		f.lastNow = now
		tx := &Tx{Batch: b, Now: time.Unix(0, now).UTC(), Index: l.Index}
		out := make([]any, len(cmds))
		for j, c := range cmds {
			out[j] = f.reg.Apply(tx, c)
		}
		results[i] = out
		txs = append(txs, tx)
		last = l.Index
		ncmds += len(cmds)
	}
	if last == 0 {
		b.Close()
		return results
	}
	for _, tx := range txs {
		tx.RunBeforeCommit()
		after = append(after, tx.after...)
	}
	var v [16]byte
	binary.BigEndian.PutUint64(v[:8], last)
	binary.BigEndian.PutUint64(v[8:], uint64(f.lastNow))
	if err := b.Set(appliedKey, v[:], nil); err != nil {
		panic(fmt.Sprintf("replica: set applied: %v", err))
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		panic(fmt.Sprintf("replica: commit entry %d: %v", last, err))
	}
	b.Close()
	f.applied.Store(last)
	f.appliedMoved()
	for _, fn := range after {
		fn()
	}
	if f.observer != nil {
		f.observer(ncmds, time.Since(start))
	}
	return results
}
