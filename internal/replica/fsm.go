package replica

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
type fsm struct {
	db       *pebble.DB
	reg      *Registry
	applied  atomic.Uint64
	lastNow  int64 // only touched by raft's FSM goroutine
	observer func(cmds int, d time.Duration)
}

func newFSM(db *pebble.DB, reg *Registry) (*fsm, error) {
	f := &fsm{db: db, reg: reg}
	v, closer, err := db.Get(appliedKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("replica: read applied index: %w", err)
	default:
		if len(v) == 16 {
			f.applied.Store(binary.BigEndian.Uint64(v))
			f.lastNow = int64(binary.BigEndian.Uint64(v[8:]))
		}
		closer.Close()
	}
	return f, nil
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
	for _, fn := range after {
		fn()
	}
	if f.observer != nil {
		f.observer(ncmds, time.Since(start))
	}
	return results
}

// Snapshot captures a consistent Pebble snapshot; Persist streams it.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	// Sync the WAL so state up to the snapshot index survives power loss
	// even after Raft truncates the log behind the snapshot.
	if err := f.db.LogData(nil, pebble.Sync); err != nil {
		return nil, fmt.Errorf("replica: sync before snapshot: %w", err)
	}
	return &snapshot{snap: f.db.NewSnapshot()}, nil
}

// Restore replaces the whole state with a snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.db.DeleteRange([]byte{}, allKeysEnd, pebble.NoSync); err != nil {
		return fmt.Errorf("replica: clear before restore: %w", err)
	}
	r := bufio.NewReaderSize(rc, 1<<20)
	b := f.db.NewBatch()
	for {
		k, err := readChunk(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("replica: restore key: %w", err)
		}
		v, err := readChunk(r)
		if err != nil {
			return fmt.Errorf("replica: restore value: %w", err)
		}
		if err := b.Set(k, v, nil); err != nil {
			return err
		}
		if b.Len() > 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return err
			}
			b = f.db.NewBatch()
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	nf, err := newFSM(f.db, f.reg)
	if err != nil {
		return err
	}
	f.applied.Store(nf.applied.Load())
	f.lastNow = nf.lastNow
	for _, fn := range f.reg.onRestore {
		fn()
	}
	return nil
}

var allKeysEnd = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

type snapshot struct{ snap *pebble.Snapshot }

// Snapshot format, never change: (uvarint len, key, uvarint len, value)*.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	w := bufio.NewWriterSize(sink, 1<<20)
	it, err := s.snap.NewIter(nil)
	if err != nil {
		sink.Cancel()
		return err
	}
	var hdr [binary.MaxVarintLen64]byte
	for it.First(); it.Valid(); it.Next() {
		for _, chunk := range [][]byte{it.Key(), it.Value()} {
			n := binary.PutUvarint(hdr[:], uint64(len(chunk)))
			if _, err := w.Write(hdr[:n]); err != nil {
				it.Close()
				sink.Cancel()
				return err
			}
			if _, err := w.Write(chunk); err != nil {
				it.Close()
				sink.Cancel()
				return err
			}
		}
	}
	if err := it.Close(); err != nil {
		sink.Cancel()
		return err
	}
	if err := w.Flush(); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() { s.snap.Close() }

func readChunk(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("chunk of %d bytes", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}
