package replica

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

const (
	cmdPut   CommandType = 2 // payload key byte + value: sets "k"+key; refused (before writing) when the value is empty
	cmdDrop  CommandType = 3 // payload key byte: deletes "k"+key; refused (before writing) when absent
	cmdSpoil CommandType = 4 // writes, then refuses: its group applies again without it
)

// cachedCounter is a state machine with a cache, as the shard engine has: the
// counter's value as its handlers last wrote it, which only a reset drops.
// A member that applied effects without dropping it would answer the next
// add, once it leads, from a stale value.
type cachedCounter struct {
	cached *uint64 // FSM only (the apply and the leader's evaluation)
	after  atomic.Int64
}

func (l *cachedCounter) registry() *Registry {
	r := new(Registry)
	r.OnReset(func() { l.cached = nil })
	r.Register(cmdAdd, "add", func(tx *Tx, p []byte) (any, error) {
		if p[0] == 0 {
			return nil, errors.New("zero")
		}
		if l.cached == nil {
			var n uint64
			if v, closer, err := tx.Get([]byte("n")); err == nil {
				n = binary.BigEndian.Uint64(v)
				closer.Close()
			}
			l.cached = &n
		}
		n := *l.cached + uint64(p[0])
		must(tx.Set([]byte("n"), binary.BigEndian.AppendUint64(nil, n), nil))
		l.cached = &n
		if len(tx.before) == 0 { // once per entry: a record keyed by Tx.Index, written before the commit
			tx.BeforeCommit(func() {
				must(tx.Set(fmt.Appendf(nil, "b%020d", tx.Index), binary.BigEndian.AppendUint64(nil, uint64(tx.Now.UnixNano())), nil))
			})
		}
		tx.AfterCommit(func() { l.after.Add(1) })
		return n, nil
	})
	r.Register(cmdPut, "put", func(tx *Tx, p []byte) (any, error) {
		if len(p) < 2 {
			return nil, errors.New("empty value")
		}
		return nil, tx.Set([]byte{'k', p[0]}, p[1:], nil)
	})
	r.Register(cmdDrop, "drop", func(tx *Tx, p []byte) (any, error) {
		_, closer, err := tx.Get([]byte{'k', p[0]})
		if err != nil {
			return nil, errors.New("absent")
		}
		closer.Close()
		return nil, tx.Delete([]byte{'k', p[0]}, nil)
	})
	r.Register(cmdSpoil, "spoil", func(tx *Tx, p []byte) (any, error) {
		must(tx.Set([]byte("spoiled"), p, nil))
		return nil, errors.New("spoiled")
	})
	return r
}

// holdsTheState fails the test if the cache is not what db holds.
func (l *cachedCounter) holdsTheState(t *testing.T, db *pebble.DB) {
	t.Helper()
	if l.cached == nil {
		return
	}
	var n uint64
	if v, closer, err := db.Get([]byte("n")); err == nil {
		n = binary.BigEndian.Uint64(v)
		closer.Close()
	}
	require.Equal(t, n, *l.cached, "the cache holds what the state does")
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// randomCmd is one command of a random load; keys are taken from ks.
func randomCmd(r *rand.Rand, ks []byte) []byte {
	k := ks[r.IntN(len(ks))]
	switch r.IntN(8) {
	case 0:
		return Command(cmdDrop, []byte{k})
	case 1:
		return Command(cmdSpoil, []byte{k})
	case 2, 3:
		v := make([]byte, r.IntN(4))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		return Command(cmdPut, append([]byte{k}, v...))
	}
	return Command(cmdAdd, []byte{byte(r.IntN(4))})
}

// dump is every key and value of db, in order.
func dump(t *testing.T, db *pebble.DB) []string {
	t.Helper()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, hex.EncodeToString(it.Key())+"="+hex.EncodeToString(it.Value()))
	}
	return out
}

func testFSM(t *testing.T, reg *Registry) *fsm {
	t.Helper()
	opts := StateOptions()
	db, err := pebble.Open(t.TempDir(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	f, err := newFSM(db, reg, t.TempDir())
	require.NoError(t, err)
	return f
}

func TestEffectsEntryCodec(t *testing.T) {
	e := &effectsEntry{now: -5, base: 1 << 40, index: 1<<40 + 1, term: 7, ncmds: 300, token: 1<<63 + 9, repr: []byte("batch")}
	got, err := decodeEffects(encodeEffects(e))
	require.NoError(t, err)
	require.Equal(t, e, got)
	for _, bad := range [][]byte{nil, {entryCommands, 0, 0, 0, 0, 0, 0, 0, 0}, encodeEffects(e)[:12]} {
		_, err := decodeEffects(bad)
		require.Error(t, err)
	}
	_, _, err = decodeEntry(encodeEffects(e))
	require.Error(t, err, "a commands reader refuses an effects entry rather than misread it")
}

// The leader's evaluation applied as effects, by itself and by another
// member in mixed batches, leaves the same state, outcomes and callbacks
// as the same commands applied as commands.
func TestEffectsApplyAsTheCommandsWould(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var la, lb, lc cachedCounter
	ra, rb := la.registry(), lb.registry()
	var toldA, toldB, effects int
	ra.OnEffectsApplied(func() { toldA++ })
	rb.OnEffectsApplied(func() { toldB++ })
	a, b, c := testFSM(t, ra), testFSM(t, rb), testFSM(t, lc.registry())
	var effLog, cmdLog []*raft.Log
	var wantOuts [][]Outcome
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := uint64(1); i <= 300; i++ {
		cmds := make([][]byte, 1+r.IntN(6))
		for j := range cmds {
			cmds[j] = randomCmd(r, []byte("abc"))
		}
		now += int64(r.IntN(1000)) - 200 // the clock sometimes goes back
		var data []byte
		if r.IntN(4) == 0 {
			data = encodeEntry(now, cmds)
		} else {
			a.mu.Lock()
			data = a.evalEffects(now, cmds, i, 1)
			a.mu.Unlock()
			effects++
		}
		l := &raft.Log{Type: raft.LogCommand, Index: i, Term: 1, Data: data}
		outs := a.ApplyBatch([]*raft.Log{l})[0].([]Outcome)
		require.Nil(t, a.own)
		effLog = append(effLog, l)
		cmdLog = append(cmdLog, &raft.Log{Type: raft.LogCommand, Index: i, Term: 1, Data: encodeEntry(now, cmds)})
		wantOuts = append(wantOuts, outs)
	}
	applyInChunks := func(f *fsm, l *cachedCounter, logs []*raft.Log) (outs []any) {
		for len(logs) > 0 {
			k := min(1+r.IntN(8), len(logs))
			outs = append(outs, f.ApplyBatch(logs[:k])...)
			logs = logs[k:]
			if !f.stale { // a member that applied effects resets its caches before handlers run
				l.holdsTheState(t, f.db)
			}
		}
		return outs
	}
	bOuts := applyInChunks(b, &lb, effLog)
	cOuts := applyInChunks(c, &lc, cmdLog)
	for i, o := range cOuts {
		require.Equal(t, fmt.Sprint(wantOuts[i]), fmt.Sprint(o), "entry %d", i+1)
		if effLog[i].Data[0] == entryCommands { // b ran these commands, after effects it did not
			require.Equal(t, fmt.Sprint(wantOuts[i]), fmt.Sprint(bOuts[i]), "entry %d on the other member", i+1)
		}
	}
	want := dump(t, c.db)
	require.Equal(t, want, dump(t, a.db))
	require.Equal(t, want, dump(t, b.db))
	require.Equal(t, lc.after.Load(), la.after.Load(), "the evaluating member runs every after-commit callback once")
	require.Less(t, lb.after.Load(), la.after.Load(), "a member applying effects runs only those of commands entries")
	require.Greater(t, a.redos.Load(), uint64(0), "the load refused commands that had written")
	require.Zero(t, toldA, "the evaluating member's views were fed by its handlers")
	require.Equal(t, effects, toldB, "another member is told of every effects entry it applied")
}

// An effects entry applies only on the index it was evaluated on: every
// member refuses alike one evaluated in an earlier term than it was
// appended in, and a mismatch within its term stops the member.
func TestEffectsBaseMismatch(t *testing.T) {
	var l cachedCounter
	f := testFSM(t, l.registry())
	f.mu.Lock()
	data := f.evalEffects(1, [][]byte{Command(cmdAdd, []byte{5})}, 42, 3)
	f.mu.Unlock()
	l.cached = new(uint64) // a value the evaluation did not leave: the refusal must drop it
	*l.cached = 99
	before := dump(t, f.db)

	stale := &raft.Log{Type: raft.LogCommand, Index: 2, Term: 4, Data: data}
	f.applied.Store(1) // as if another leader's entry 1 applied after the evaluation
	res := f.ApplyBatch([]*raft.Log{stale})
	require.ErrorIs(t, res[0].(error), ErrNotLeader)
	require.Equal(t, uint64(1), f.applied.Load())
	require.Equal(t, before, dump(t, f.db))
	require.Nil(t, f.own)
	require.Nil(t, l.cached, "the evaluation's caches were dropped")

	diverged := &raft.Log{Type: raft.LogCommand, Index: 2, Term: 3, Data: data}
	require.PanicsWithValue(t, "replica: entry 2 was evaluated on applied index 0 in term 3, but this member has applied 1: the state would diverge", func() {
		f.ApplyBatch([]*raft.Log{diverged})
	})
}

// An evaluation whose entry failed in Raft is dropped with the caches it
// filled; if the entry commits after all, the member applies it as any
// other member does: its state, without the proposers' callbacks.
func TestEffectsDiscardedEvaluation(t *testing.T) {
	var l cachedCounter
	f := testFSM(t, l.registry())
	f.mu.Lock()
	data := f.evalEffects(1, [][]byte{Command(cmdAdd, []byte{5})}, 7, 1)
	f.mu.Unlock()
	require.Equal(t, uint64(5), *l.cached, "the evaluation filled the cache")
	f.discard(8) // another evaluation's: nothing happens
	require.NotNil(t, f.own)
	f.discard(7)
	require.Nil(t, f.own)
	require.Nil(t, l.cached)
	require.Nil(t, f.ApplyBatch([]*raft.Log{{Type: raft.LogCommand, Index: 1, Term: 1, Data: data}})[0])
	require.Equal(t, uint64(5), readN(&Node{db: f.db}))
	require.Zero(t, l.after.Load())
	l.holdsTheState(t, f.db)
}

// The next entry would have to be evaluated over the uncommitted batch of
// the one before: Effects with more than one entry in Raft is refused.
func TestEffectsNeedOneEntryInFlight(t *testing.T) {
	_, err := Open(Config{Dir: t.TempDir(), Effects: true, Inflight: 2}, new(Registry))
	require.ErrorContains(t, err, "Config.Effects needs Config.Inflight 1")
}
