package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// enqueueCmd is one enqueue of n jobs of queue q: one entry, n events.
func (f *fsmBundle) enqueueCmd(n int) []byte {
	c := &EnqueueCmd{NS: testNS}
	for range n {
		j := &job.Job{ID: f.e.newIDForTest(), Queue: "q", Backoff: job.BackoffFixed, BaseDelay: 1e9, MaxDelay: 60e9}
		c.Jobs = append(c.Jobs, j.Encode())
	}
	return Enqueue.Command(c)
}

// eventValues is the value under each of ns's event keys, in order.
func (f *fsmBundle) eventValues() [][]byte {
	f.t.Helper()
	p := keys.EventPrefix(testNS)
	x := newEventIter(f.db, testNS)
	defer x.close()
	var out [][]byte
	for ok := x.it.SeekGE(p); ok; ok = x.it.Next() {
		out = append(out, bytes.Clone(x.it.Value()))
	}
	return out
}

func (f *fsmBundle) eventCount() int64 {
	f.t.Helper()
	n, ok := f.e.EventCount(f.db, testNS)
	require.True(f.t, ok)
	return n
}

// The blocks start only on a counted log; single events written before
// read as blocks of one, in order across the switch; a resume in the
// middle of a block reads the rest of it; limits count events.
func TestEventBlocksFollowSingleEvents(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	require.False(t, f.e.EventLogBlocks(f.db), "no blocks before the log is counted")
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.loc.Apply(f.now, f.enqueueCmd(3))
	require.Len(t, f.eventValues(), 3, "one key an event before the blocks")

	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	require.True(t, f.e.EventLogBlocks(f.db))
	require.True(t, f.e.EventLogCounted(f.db), "the start record keeps the other switches")
	require.True(t, f.e.EventLogWide(f.db))
	f.loc.Apply(f.now, f.enqueueCmd(5))
	f.loc.Apply(f.now, f.enqueueCmd(1))
	vals := f.eventValues()
	require.Len(t, vals, 5, "one key an entry once in blocks")
	require.EqualValues(t, eventBlockVersion, vals[3][0])
	require.EqualValues(t, 5, blockCount(vals[3]))
	require.EqualValues(t, eventVersion, vals[4][0], "a block of one is a single event")

	evs, _, _ := f.events(0)
	require.Len(t, evs, 9)
	for i := 1; i < len(evs); i++ {
		require.Greater(t, evs[i].Seq, evs[i-1].Seq)
		require.Equal(t, "enqueued", evs[i].Type)
	}
	require.Equal(t, evs[3].Seq+1, evs[4].Seq, "a block's events are numbered in a row")
	require.Equal(t, evs[8].Seq, f.e.LatestEvent(f.db, testNS))
	require.EqualValues(t, 9, f.eventCount())
	for i := range evs {
		rest, missed, _ := f.events(evs[i].Seq)
		require.False(t, missed)
		if i == len(evs)-1 {
			require.Empty(t, rest, "resume after the newest")
			continue
		}
		require.Equal(t, evs[i+1:], rest, "resume after event %d", i)
	}
	two, _, _ := f.e.ReadEvents(f.db, testNS, evs[4].Seq, 2, nil)
	require.Equal(t, evs[5:7], two, "a limit counts events, not keys")
	decoded := 0
	for _, v := range vals {
		if v[0] == eventBlockVersion {
			decoded++
		}
	}
	require.Equal(t, 1, decoded)
}

// A trim through the middle of a block writes the block's later events
// again under the next number: the count and the reads hold exactly the
// events after the trim's point, and the trim point counts events.
func TestEventTrimInTheMiddleOfABlock(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	f.loc.Apply(f.now, f.enqueueCmd(6))
	evs, _, _ := f.events(0)
	require.Len(t, evs, 6)
	require.Len(t, f.eventValues(), 1)

	at, ok := EventTrimPoint(f.db, testNS, EventRetention{MaxAge: 1 << 62, MaxCount: 2}, f.now.UnixNano(), 100, f.eventCount())
	require.True(t, ok)
	require.Equal(t, evs[3].Seq, at, "the 2 newest stay (counted)")
	at, ok = EventTrimPoint(f.db, testNS, EventRetention{MaxAge: 1 << 62, MaxCount: 2}, f.now.UnixNano(), 100, -1)
	require.True(t, ok)
	require.Equal(t, evs[3].Seq, at, "the 2 newest stay (counting back)")

	require.Equal(t, 1, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: evs[2].Seq}))
	require.EqualValues(t, 3, f.eventCount())
	kept, missed, skipTo := f.events(0)
	require.True(t, missed)
	require.Equal(t, evs[2].Seq, skipTo)
	require.Equal(t, evs[3:], kept)
	require.Equal(t, kept, must3(f.e.ReadEvents(f.db, testNS, evs[2].Seq, 10, nil)))
	vals := f.eventValues()
	require.Len(t, vals, 1)
	require.EqualValues(t, 3, blockCount(vals[0]))

	require.Equal(t, 1, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: evs[4].Seq}))
	require.EqualValues(t, 1, f.eventCount())
	kept, _, _ = f.events(0)
	require.Equal(t, evs[5:], kept)
	vals = f.eventValues()
	require.Len(t, vals, 1)
	require.EqualValues(t, eventVersion, vals[0][0], "what is left of a block of one is a single event")
	require.Equal(t, evs[5].Seq, f.e.LatestEvent(f.db, testNS))
}

func must3(evs []Event, _ bool, _ uint64) []Event { return evs }

// Events held in an entry are written before anything in that entry
// trims or wipes the log, or are dropped with it: a restore's wipe after
// the entry's events leaves none, nor does a purge's, and a trim in the entry that wrote the
// events takes those at or below its point.
func TestEventBlocksSeeTrimsAndWipesOfTheirEntry(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	f.loc.Apply(f.now, f.enqueueCmd(2))
	evs, _, _ := f.events(0)
	idx := evs[0].Seq>>EventSeqBits + 1 // the next entry's

	outs := f.loc.Apply(f.now, f.enqueueCmd(5),
		EventTrim.Command(&EventTrimCmd{NS: testNS, Through: idx<<EventSeqBits | 2}), f.enqueueCmd(2))
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	evs, _, _ = f.events(0)
	require.Len(t, evs, 4, "the entry's 2 events after the trim's point, then 2 more")
	require.Equal(t, idx<<EventSeqBits|3, evs[0].Seq)
	require.EqualValues(t, 4, f.eventCount())

	outs = f.loc.Apply(f.now, f.enqueueCmd(3), RestoreBegin.Command(&RestoreBeginCmd{NS: testNS, Token: "t", Replace: true}))
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	kept, missed, _ := f.events(evs[0].Seq)
	require.True(t, missed)
	require.Empty(t, kept, "the wipe took the events of its own entry")
	require.Empty(t, f.eventValues())

	// A purge's range delete reads no events first: it drops those held.
	outs = f.loc.Apply(f.now, f.enqueueCmd(3), NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS}),
		NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS, Phase: 1}))
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	require.True(t, outs[2].Value.(*PurgeStep).Done)
	require.Empty(t, f.eventValues(), "the purge took the events of its own entry")
	_, counted := f.e.EventCount(f.db, testNS)
	require.True(t, counted)
	require.Zero(t, readEventCount(f.db, testNS))
	require.Zero(t, f.loc.Redos())
}

// A script that reaches the blocks' start writes blocks, and two replays
// of it write the same bytes; without the blocks' start it writes single
// events only, as it first applied.
func TestEventBlocksReplayAlike(t *testing.T) {
	t.Parallel()
	log, used := makeScript(7, 1200)
	require.True(t, used[EventLogStartBlocks.Type])
	a, b := eventKeys(replay(t, log)), eventKeys(replay(t, log))
	require.Equal(t, string(a), string(b))
	require.Positive(t, blockLines(a), "the script writes blocks once they start")

	var old []entry
	for _, e := range log {
		o := entry{now: e.now}
		for _, c := range e.cmds {
			if c[0] != byte(EventLogStartBlocks.Type) {
				o.cmds = append(o.cmds, c)
			}
		}
		old = append(old, o)
	}
	require.Zero(t, blockLines(eventKeys(replay(t, old))), "no blocks without their start")
}

// blockLines counts the blocks in eventKeys's dump (hex key=hex value).
func blockLines(dump []byte) int {
	n := 0
	for _, line := range strings.Split(string(dump), "\n") {
		if _, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(v, "02") {
			n++
		}
	}
	return n
}

// A node applies several entries in one batch when it catches up, and
// another applies them one by one: both end with the same bytes, blocks
// held across an entry's end, a trim through one and a purge after them
// included.
func TestEventBlocksAlikeInOneGroup(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0).UTC()
	mk := &fsmBundle{t: t, e: New(Options{})}
	starts := [][]byte{EventLogStartCounted.Command(&EventLogStartCmd{}), EventLogStartBlocks.Command(&EventLogStartCmd{})}
	entries := [][][]byte{ // indexes 3…
		{mk.enqueueCmd(3)},
		{mk.enqueueCmd(2)},
		{EventTrim.Command(&EventTrimCmd{NS: testNS, Through: 3<<EventSeqBits | 1}), mk.enqueueCmd(2)},
		{mk.enqueueCmd(1)},
		{NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS}), NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS, Phase: 1})},
		{mk.enqueueCmd(4)},
		{mk.enqueueCmd(2)},
	}
	open := func() (*pebble.DB, *Engine, *replica.Local) {
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		e := New(Options{})
		loc, err := replica.NewLocal(db, e.Registry())
		require.NoError(t, err)
		for _, c := range starts {
			loc.Apply(now, c)
		}
		return db, e, loc
	}

	one, _, loc := open()
	for i, cmds := range entries {
		for _, o := range loc.Apply(now, cmds...) {
			require.NoError(t, o.Err, "entry %d", i)
		}
		if i == 3 {
			evs, _, _ := New(Options{}).ReadEvents(one, testNS, 0, 100, nil)
			require.Len(t, evs, 6, "2 of the first entry's 3 after the trim, 2, 2 and 1")
		}
	}

	group, e, _ := open()
	reg := e.Registry()
	b := group.NewIndexedBatch()
	var txs []*replica.Tx
	for i, cmds := range entries {
		tx := replica.NewTx(b, now, uint64(3+i))
		txs = append(txs, tx)
		for _, c := range cmds {
			_, err := reg.Apply(tx, c)
			require.NoError(t, err, "entry %d", i)
		}
	}
	for _, tx := range txs {
		tx.RunBeforeCommit()
	}
	require.NoError(t, b.Commit(pebble.NoSync))
	require.Equal(t, string(dump(t, one)), string(dump(t, group)))
	evs, _, _ := e.ReadEvents(group, testNS, 0, 100, nil)
	require.Len(t, evs, 6, "the purge's entry took what came before it")
	require.EqualValues(t, 6, readEventCount(group, testNS))
}
