package replica

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/stretchr/testify/require"
)

// evalOwn has f evaluate one add of v as the entry after its applied
// state, as the batch loop of a leader does.
func evalOwn(f *fsm, v byte, token, term uint64) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.evalEffects(1, [][]byte{Command(cmdAdd, []byte{v})}, token, term)
}

func effectsLog(index, term uint64, data []byte) []*raft.Log {
	return []*raft.Log{{Type: raft.LogCommand, Index: index, Term: term, Data: data}}
}

// The evaluating node commits the batch it evaluated, not the log's copy:
// given a log whose copy it could not even decode, it still applies its
// evaluation; and where it checks (race builds, tests) a copy that
// differs from its batch stops it.
func TestEffectsLeaderCommitsItsEvaluation(t *testing.T) {
	var l cachedCounter
	f := testFSM(t, l.registry())
	e, err := decodeEffects(evalOwn(f, 5, 7, 1))
	require.NoError(t, err)
	e.repr = []byte("not the batch")
	checkOwnEffects = false
	defer func() { checkOwnEffects = true }()
	outs, ok := f.ApplyBatch(effectsLog(1, 1, encodeEffects(e)))[0].([]Outcome)
	require.True(t, ok, "applied as this node's evaluation")
	require.Equal(t, uint64(5), outs[0].Value)
	require.Equal(t, uint64(5), readN(&Node{db: f.db}))
	require.EqualValues(t, 1, l.after.Load())
	require.Zero(t, f.openEvals)

	checkOwnEffects = true
	e, err = decodeEffects(evalOwn(f, 2, 8, 1))
	require.NoError(t, err)
	other := testFSM(t, new(cachedCounter).registry())
	other.applied.Store(1)
	o, err := decodeEffects(evalOwn(other, 3, 9, 1)) // a valid batch, but not this one
	require.NoError(t, err)
	e.repr = o.repr
	require.PanicsWithValue(t, "replica: entry 2: the evaluated batch is not the log's (<nil>)", func() {
		f.ApplyBatch(effectsLog(2, 1, encodeEffects(e)))
	})
}

// Every way an evaluation ends closes the batch it keeps, and one that
// does not apply as this node's leaves no cache holding its effects.
func TestEffectsKeptBatchClosedOnEveryEnd(t *testing.T) {
	// another is an entry another leader evaluated on base, in term, adding v.
	another := func(base, term uint64, v byte) []byte {
		g := testFSM(t, new(cachedCounter).registry())
		g.applied.Store(base)
		return evalOwn(g, v, 99, term)
	}
	for name, tc := range map[string]struct {
		end  func(f *fsm, own []byte)
		want uint64 // the counter's state after
	}{
		"its entry applies": {end: func(f *fsm, own []byte) { f.ApplyBatch(effectsLog(1, 1, own)) }, want: 5},
		"its entry failed":  {end: func(f *fsm, own []byte) { f.discard(7) }},
		"evaluated again before it resolved": {end: func(f *fsm, own []byte) {
			f.ApplyBatch(effectsLog(1, 1, evalOwn(f, 2, 8, 1)))
		}, want: 2},
		"its entry appended in a later term": {end: func(f *fsm, own []byte) {
			f.applied.Store(1)
			require.ErrorIs(t, f.ApplyBatch(effectsLog(2, 2, own))[0].(error), ErrNotLeader)
		}},
		"another leader's effects entry": {end: func(f *fsm, own []byte) {
			f.ApplyBatch(effectsLog(1, 2, another(0, 2, 3)))
		}, want: 3},
		"another leader's stale effects entry": {end: func(f *fsm, own []byte) {
			require.ErrorIs(t, f.ApplyBatch(effectsLog(1, 3, another(4, 2, 3)))[0].(error), ErrNotLeader)
		}},
		"another leader's commands entry": {end: func(f *fsm, own []byte) {
			f.ApplyBatch(effectsLog(1, 2, encodeEntry(1, [][]byte{Command(cmdAdd, []byte{4})})))
		}, want: 4},
	} {
		t.Run(name, func(t *testing.T) {
			var l cachedCounter
			f := testFSM(t, l.registry())
			own := evalOwn(f, 5, 7, 1)
			require.Equal(t, 1, f.openEvals)
			require.Equal(t, uint64(5), *l.cached, "the evaluation filled the cache")
			tc.end(f, own)
			require.Nil(t, f.own)
			require.Zero(t, f.openEvals, "the kept batch was closed")
			require.Equal(t, tc.want, readN(&Node{db: f.db}))
			if !f.stale {
				l.holdsTheState(t, f.db)
			}
		})
	}
}

// A restore and a node's close end an evaluation too.
func TestEffectsKeptBatchClosedByRestoreAndClose(t *testing.T) {
	var l cachedCounter
	n, err := Open(Config{Dir: t.TempDir(), Bootstrap: true, Effects: true, HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}, l.registry())
	require.NoError(t, err)
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, n.WaitLeader(ctx))
	_, err = n.Propose(ctx, Command(cmdAdd, []byte{7}))
	require.NoError(t, err)
	require.NoError(t, n.Snapshot())
	snaps, err := n.snaps.List()
	require.NoError(t, err)

	// The evaluations below are never proposed: nothing applies them.
	evalOwn(n.fsm, 5, 1, n.raft.CurrentTerm())
	require.Equal(t, 1, n.fsm.openEvals)
	_, rc, err := n.snaps.Open(snaps[0].ID)
	require.NoError(t, err)
	require.NoError(t, n.fsm.Restore(rc))
	require.Zero(t, n.fsm.openEvals, "a restore closed the kept batch")
	require.Nil(t, l.cached)

	evalOwn(n.fsm, 5, 2, n.raft.CurrentTerm())
	require.NoError(t, n.Close())
	require.Zero(t, n.fsm.openEvals, "closing the node closed the kept batch")
}

// Format version 2 carries the batch in Snappy's block format, which the
// strict decoder (as github.com/golang/snappy and the reference decoder
// read it) accepts: not s2's own format, which would need a version of
// its own.
func TestEffectsEntryIsSnappy(t *testing.T) {
	var l cachedCounter
	f := testFSM(t, l.registry())
	cmds := make([][]byte, 0, 200)
	for i := range 200 { // enough repeats for every kind of copy
		cmds = append(cmds, Command(cmdPut, []byte{byte('a' + i%26), 'v', byte(i), 'v', 'v', 'v', 'v'}), Command(cmdAdd, []byte{1}))
	}
	f.mu.Lock()
	data := f.evalEffects(1, cmds, 1, 1)
	raw := append([]byte(nil), f.own.b.Repr()...)
	f.mu.Unlock()
	e, err := decodeEffects(data)
	require.NoError(t, err)
	got, err := snappy.DecodeStrict(nil, e.repr)
	require.NoError(t, err)
	require.Equal(t, raw, got)
	_, err = snappy.DecodeStrict(nil, s2.Encode(nil, raw))
	require.Error(t, err, "the test tells s2's format apart")
}
