package engine

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

func (f *fsmBundle) events(after uint64) ([]Event, bool, uint64) {
	return f.e.ReadEvents(f.db, testNS, after, 10_000, nil)
}

func TestEventTypes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to job.State
		want     string
	}{
		{0, job.Pending, "enqueued"}, {0, job.Scheduled, "enqueued"},
		{job.Pending, job.Active, "started"}, {job.Active, job.Completed, "completed"},
		{job.Active, job.Retrying, "failed"}, {job.Active, job.Pending, "failed"},
		{job.Active, job.Dead, "dead"}, {job.Retrying, job.Pending, "pending"},
		{job.Scheduled, job.Pending, "pending"}, {job.Dead, job.Pending, "retried"},
		{job.Pending, job.Cancelled, "cancelled"},
	} {
		require.Equal(t, c.want, EventType(c.from, c.to, false), "%s → %s", c.from, c.to)
	}
	require.Equal(t, "lease_released", EventType(job.Active, job.Pending, true))
}

func TestEventRecordRoundTrips(t *testing.T) {
	t.Parallel()
	ev := Event{Type: "started", JobID: "job_1", Queue: "q", State: job.Active, From: job.Pending, At: 1_800_000_000_123, Attempt: 2, WorkerID: "w"}
	var got Event
	require.True(t, decodeEvent(appendEvent(nil, &ev), &got))
	require.Equal(t, ev, got)
	require.False(t, decodeEvent(appendEvent(nil, &ev)[:5], &got), "a cut record is refused")
}

// Before the log starts an apply writes no event; after, every change of
// a job writes one, numbered by its entry and position.
func TestEventLogStartsWithItsCommand(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.enqueue(&job.Job{Queue: "q"})
	evs, missed, _ := f.events(0)
	require.Empty(t, evs)
	require.False(t, missed, "nothing is logged while the log is off")

	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	start, on := f.e.EventLogStart(f.db)
	require.True(t, on)
	f.apply(EventLogStart.Type, &EventLogStartCmd{}) // a second start changes nothing
	again, _ := f.e.EventLogStart(f.db)
	require.Equal(t, start, again)

	id := f.enqueue(&job.Job{Queue: "q"})
	j := f.fetch("q")
	require.NotNil(t, j)
	evs, missed, _ = f.events(0)
	require.True(t, missed, "an id from before the start may have had events the log never kept")
	require.Len(t, evs, 2)
	require.Equal(t, []string{"enqueued", "started"}, []string{evs[0].Type, evs[1].Type})
	require.Equal(t, id, evs[0].JobID)
	require.Equal(t, j.ID, evs[1].JobID)
	require.Equal(t, "w", evs[1].WorkerID)
	require.Greater(t, evs[1].Seq, evs[0].Seq)
	require.Equal(t, evs[0].Seq&eventSeqMask, uint64(0), "the first event of an entry is at position 0")
	require.Equal(t, evs[1].Seq, f.e.LatestEvent(f.db, testNS))

	evs, missed, _ = f.events(evs[0].Seq)
	require.False(t, missed)
	require.Len(t, evs, 1, "resume after an id")
}

// A trim deletes the events at or below its point and raises the floor:
// a reader from below is told, and resumes at the oldest kept.
func TestEventTrimRaisesTheFloor(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	for range 5 {
		f.enqueue(&job.Job{Queue: "q"})
		f.advance(time.Second)
	}
	evs, _, _ := f.events(0)
	require.Len(t, evs, 5)
	require.Equal(t, 1, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: evs[1].Seq}))
	require.Equal(t, 0, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: evs[0].Seq}), "a trim below the floor does nothing")

	kept, missed, skipTo := f.events(evs[0].Seq)
	require.True(t, missed)
	require.Equal(t, evs[1].Seq, skipTo)
	require.Equal(t, evs[2:], kept)
	kept, missed, _ = f.events(evs[1].Seq)
	require.False(t, missed, "a reader at the floor missed nothing")
	require.Len(t, kept, 3)
}

// The leader's trim point keeps the events of the last MaxAge, and at
// most MaxCount of them: counting back from the newest in a log that is
// not counted, from its count in one that is (the same answers).
func TestEventTrimPointByAgeAndCount(t *testing.T) {
	t.Parallel()
	for _, counted := range []bool{false, true} {
		f := setupFSM(t)
		start := EventLogStart
		if counted {
			start = EventLogStartCounted
		}
		f.apply(start.Type, &EventLogStartCmd{})
		for range 10 {
			f.enqueue(&job.Job{Queue: "q"})
			f.advance(time.Minute)
		}
		evs, _, _ := f.events(0)
		count, ok := f.e.EventCount(f.db, testNS)
		require.Equal(t, counted, ok)
		if !counted {
			count = -1
		} else {
			require.EqualValues(t, 10, count)
		}
		now := f.now.UnixNano() // a minute after the last
		_, ok = EventTrimPoint(f.db, testNS, EventRetention{MaxAge: time.Hour, MaxCount: 100}, now, 100, count)
		require.False(t, ok, "nothing is too old or too many")
		at, ok := EventTrimPoint(f.db, testNS, EventRetention{MaxAge: 3*time.Minute + time.Second, MaxCount: 100}, now, 100, count)
		require.True(t, ok)
		require.Equal(t, evs[6].Seq, at, "the 3 events of the last 3 minutes stay")
		at, ok = EventTrimPoint(f.db, testNS, EventRetention{MaxAge: time.Hour, MaxCount: 4}, now, 100, count)
		require.True(t, ok)
		require.Equal(t, evs[5].Seq, at, "the 4 newest stay")
		at, ok = EventTrimPoint(f.db, testNS, EventRetention{MaxAge: 3*time.Minute + time.Second, MaxCount: 2}, now, 100, count)
		require.True(t, ok)
		require.Equal(t, evs[7].Seq, at, "the stricter of the two")
		at, ok = EventTrimPoint(f.db, testNS, EventRetention{MaxAge: time.Second, MaxCount: 100}, now, 3, count)
		require.True(t, ok)
		require.Equal(t, evs[2].Seq, at, "one round reads at most step events for their age")
	}
}

// A counted log's count follows the events written and trimmed, and
// starts from what the log held when counting began; a purge takes it
// with the events.
func TestEventCountFollowsTheLog(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	for range 3 {
		f.enqueue(&job.Job{Queue: "q"})
	}
	_, ok := f.e.EventCount(f.db, testNS)
	require.False(t, ok, "not counted yet")
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	n, ok := f.e.EventCount(f.db, testNS)
	require.True(t, ok)
	require.EqualValues(t, 3, n, "what the log held when counting began")
	require.True(t, f.e.EventLogWide(f.db), "counted is wide too")
	for range 4 {
		f.enqueue(&job.Job{Queue: "q"})
	}
	n, _ = f.e.EventCount(f.db, testNS)
	require.EqualValues(t, 7, n)
	evs, _, _ := f.events(0)
	require.Len(t, evs, 7)
	require.Equal(t, 1, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: evs[4].Seq}))
	n, _ = f.e.EventCount(f.db, testNS)
	require.EqualValues(t, 2, n, "a trim takes what it deleted")
	require.Equal(t, 0, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: evs[3].Seq}))
	n, _ = f.e.EventCount(f.db, testNS)
	require.EqualValues(t, 2, n, "a trim below the floor takes nothing")
}

// A restore wipes the namespace's log and raises its floor: a reader
// from before is told it missed events.
func TestRestoreWipesTheEventLog(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	f.enqueue(&job.Job{Queue: "q"})
	evs, _, _ := f.events(0)
	require.Len(t, evs, 1)
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "t", Replace: true}))
	kept, missed, _ := f.events(evs[0].Seq)
	require.True(t, missed)
	require.Empty(t, kept)
}

// eventKeys is the event log of a replayed state dump (replay's format).
func eventKeys(dump []byte) []byte {
	var out bytes.Buffer
	evPrefix := []byte(string(keys.EventPrefix(testNS)))
	for _, line := range bytes.Split(dump, []byte("\n")) {
		k, _, _ := bytes.Cut(line, []byte("="))
		raw := make([]byte, len(k)/2)
		for i := range raw {
			raw[i] = unhex(k[2*i])<<4 | unhex(k[2*i+1])
		}
		if bytes.HasPrefix(raw, evPrefix) || bytes.Equal(raw, keys.EventLogStart()) {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// Two fresh nodes replaying the same log write the same events; a log
// from before the event log (no start command) replays with none, as it
// first applied.
func TestEventLogIsDeterministic(t *testing.T) {
	t.Parallel()
	log, used := makeScript(7, 1200) // long enough that things happen after the wide start, whatever the script's mix
	require.True(t, used[EventLogStart.Type])
	a, b := eventKeys(replay(t, log)), eventKeys(replay(t, log))
	require.NotEmpty(t, a, "the script logs events once started")
	require.Equal(t, string(a), string(b))

	var old []entry
	for _, e := range log {
		o := entry{now: e.now}
		for _, c := range e.cmds {
			if c[0] != byte(EventLogStart.Type) && c[0] != byte(EventLogStartWide.Type) &&
				c[0] != byte(EventLogStartCounted.Type) && c[0] != byte(EventLogStartDetailed.Type) {
				o.cmds = append(o.cmds, c)
			}
		}
		old = append(old, o)
	}
	require.Empty(t, eventKeys(replay(t, old)), "a log without the start writes no event")
}

// A log started before the wide start (EventLogStart alone) keeps job
// events only, as it first applied; with the wide start it keeps the
// other things' events too, alike on every replay; their details
// (batch.completed's counts) only after the detailed start.
func TestEventLogWideOnlyAfterItsStart(t *testing.T) {
	t.Parallel()
	log, used := makeScript(7, 1200) // long enough that things happen after the wide start, whatever the script's mix
	require.True(t, used[EventLogStartWide.Type])
	require.True(t, used[EventLogStartDetailed.Type])
	without := func(types ...replica.CommandType) []entry {
		var out []entry
		for _, e := range log {
			o := entry{now: e.now}
			for _, c := range e.cmds {
				if !slices.Contains(types, replica.CommandType(c[0])) {
					o.cmds = append(o.cmds, c)
				}
			}
			out = append(out, o)
		}
		return out
	}
	// Always without the script's trims, which could leave only job
	// events in the end; the counted start makes the log wide too.
	narrow := without(EventTrim.Type, EventLogStartWide.Type, EventLogStartCounted.Type, EventLogStartDetailed.Type)
	counted := 0
	things := func(log []entry) (n int) {
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		defer db.Close()
		eng := newScriptEngine()
		loc, err := replica.NewLocal(db, eng.Registry())
		require.NoError(t, err)
		for _, e := range log {
			loc.Apply(e.now, e.cmds...)
		}
		evs, _, _ := eng.ReadEvents(db, testNS, 0, 1_000_000, nil)
		counted = 0
		for i := range evs {
			if !evs[i].IsJob() {
				n++
			}
			if len(evs[i].Counts) > 0 {
				counted++
			}
		}
		return n
	}
	require.Zero(t, things(narrow), "without the wide start, job events only")
	require.Positive(t, things(without(EventTrim.Type, EventLogStartDetailed.Type)))
	require.Zero(t, counted, "without the detailed start, no details")
	require.Positive(t, things(without(EventTrim.Type)), "the script's batches, chains, fires and pauses log events once it applied")
	require.Equal(t, string(eventKeys(replay(t, log))), string(eventKeys(replay(t, log))))
}

// Over a random log of every command, warm and with the caches dropped
// before every entry, each namespace's count is the number of events its
// log holds once counting began.
func TestEventCountMatchesTheLog(t *testing.T) {
	t.Parallel()
	log, used := makeScript(11, 1500)
	require.True(t, used[EventLogStartCounted.Type])
	for _, cold := range []bool{false, true} {
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		eng := New(Options{Retention: scriptRetention})
		loc, err := replica.NewLocal(db, eng.Registry())
		require.NoError(t, err)
		checked := 0
		for _, e := range log {
			if cold {
				eng.reset()
			}
			loc.Apply(e.now, e.cmds...)
			for _, ns := range []string{testNS, otherNS} {
				n, ok := eng.EventCount(db, ns)
				if !ok {
					continue
				}
				p := keys.EventPrefix(ns)
				require.Equal(t, countRange(db, p, keys.PrefixEnd(p)), n, "cold %v, %s", cold, ns)
				checked++
			}
		}
		require.Positive(t, checked)
		require.NoError(t, db.Close())
	}
}
