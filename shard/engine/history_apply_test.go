package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// historyFSM is an fsmBundle whose first entry starts queue history, at
// the start of an hour (setupFSM's clock is one).
func historyFSM(t *testing.T) *fsmBundle {
	f := setupFSM(t)
	f.apply(HistoryStart.Type, &HistoryStartCmd{})
	return f
}

// buckets is queue's buckets of res, all of them.
func (f *fsmBundle) buckets(queue string, res byte) []*Bucket {
	f.t.Helper()
	out, err := ReadHistory(f.db, testNS, queue, res, 0, 1<<62)
	require.NoError(f.t, err)
	return out
}

// historyKeys counts every history key of testNS.
func (f *fsmBundle) historyKeys() int {
	f.t.Helper()
	p := keys.HistoryPrefix(testNS)
	it, err := f.db.NewIter(nil)
	require.NoError(f.t, err)
	defer it.Close()
	n := 0
	for ok := it.SeekGE(p); ok && string(it.Key()[:len(p)]) == string(p); ok = it.Next() {
		n++
	}
	return n
}

// work enqueues a job on q, fetches it and, after d, acks it (ok) or
// fails it for good (max retries 0: dead).
func (f *fsmBundle) work(q string, d time.Duration, ok bool) {
	f.t.Helper()
	id := f.enqueue(&job.Job{Queue: q, MaxRetries: 0})
	require.Equal(f.t, id, f.fetch(q).ID)
	f.advance(d)
	if ok {
		require.Equal(f.t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id, WorkerID: "w"}))
		return
	}
	require.NotNil(f.t, f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "boom"}))
}

func TestHistoryOffUntilItsStart(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.work("q", time.Second, true)
	require.Zero(t, f.historyKeys(), "a log from before history.start replays as it first applied")
	f.apply(HistoryStart.Type, &HistoryStartCmd{})
	require.True(t, f.e.HistoryOn(f.db))
	f.work("q", time.Second, true)
	require.Len(t, f.buckets("q", keys.HistoryMinute), 1)
}

func TestHistoryBucketsFillAndRoll(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := historyFSM(t)
	hour := f.now
	// Minute 0: two completed (100 ms and 200 ms), one dead (failed once).
	f.work("q", 100*time.Millisecond, true)
	f.work("q", 200*time.Millisecond, true)
	f.work("q", 50*time.Millisecond, false)
	// Minute 1: the leader's sample, one more completed, one left pending.
	f.now = hour.Add(time.Minute + 10*time.Second)
	f.apply(HistorySample.Type, &HistorySampleCmd{NS: testNS, Samples: []QueueSample{{Queue: "q", Depth: 1, OldestAt: hour.UnixNano()}}})
	f.work("q", time.Second, true)
	f.enqueue(&job.Job{Queue: "q"})

	mins := f.buckets("q", keys.HistoryMinute)
	require.Len(t, mins, 2)
	m0, m1 := mins[0], mins[1]
	require.Equal(t, hour.UnixNano(), m0.Start)
	require.Equal(t, [4]int64{3, 2, 1, 1}, [4]int64{m0.Enqueued, m0.Completed, m0.Failed, m0.Dead})
	require.Zero(t, m0.SampledAt, "no sample fell in the first minute")
	require.Equal(t, [4]int64{2, 1, 0, 0}, [4]int64{m1.Enqueued, m1.Completed, m1.Failed, m1.Dead})
	require.Equal(t, int64(1), m1.Depth)
	require.Equal(t, int64(time.Minute+10*time.Second), m1.OldestAge)

	hours := f.buckets("q", keys.HistoryHour)
	require.Len(t, hours, 1, "minutes roll up into their hour as they are counted")
	h := hours[0]
	require.Equal(t, hour.UnixNano(), h.Start)
	require.Equal(t, [4]int64{5, 3, 1, 1}, [4]int64{h.Enqueued, h.Completed, h.Failed, h.Dead})
	require.Equal(t, int64(1), h.Depth, "an hour holds its last sample")

	// Processing times: 50 ms, 100 ms, 200 ms and 1 s in the hour; each
	// percentile within 12.5% of the attempt it lands on.
	within := func(want time.Duration, gotUs float64) {
		w := float64(want.Microseconds())
		require.InDelta(t, w, gotUs, w*0.125, "want %s", want)
	}
	within(100*time.Millisecond, h.Percentile(0.50))
	within(time.Second, h.Percentile(0.95))
	within(time.Second, h.Percentile(0.99))
	within(50*time.Millisecond, m0.Percentile(0.01))
	require.Zero(t, (&Bucket{}).Percentile(0.5))
}

func TestHistoryTrimKeepsSpaceBounded(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := historyFSM(t)
	start := f.now
	// One job a minute for 50 hours, a trim every hour, on two queues.
	for i := range 50 * 60 {
		f.now = start.Add(time.Duration(i) * time.Minute)
		f.enqueue(&job.Job{Queue: []string{"a", "b"}[i%2]})
		if i%60 == 59 {
			f.apply(HistoryTrim.Type, &HistoryTrimCmd{NS: testNS})
		}
	}
	for _, q := range []string{"a", "b"} {
		mins := f.buckets(q, keys.HistoryMinute)
		floor := f.now.Truncate(time.Minute).Add(-HistoryMinutes).UnixNano()
		require.GreaterOrEqual(t, mins[0].Start, floor-int64(time.Hour), "a trim an hour ago left nothing older than 48 h then")
		require.LessOrEqual(t, len(mins), 49*60/2+1)
		require.Len(t, f.buckets(q, keys.HistoryHour), 50, "hours stay for 30 days")
	}
	// Forty days on, a trim leaves nothing of either.
	f.now = f.now.Add(40 * 24 * time.Hour)
	require.Equal(t, 2, f.apply(HistoryTrim.Type, &HistoryTrimCmd{NS: testNS}))
	require.Zero(t, f.historyKeys())
}

func TestHistoryPercentileBins(t *testing.T) {
	t.Parallel()
	prev := -1
	for us := int64(0); us < 1<<40; us = us*9/8 + 1 {
		b := histBin(us)
		require.GreaterOrEqual(t, b, prev, "bins rise with the time")
		require.Less(t, b, HistBins)
		if us >= 4 {
			require.InDelta(t, float64(us), histMid(b), float64(us)*0.125+0.5, "us %d", us)
		}
		prev = b
	}
	k := &Bucket{Enqueued: 3, SampledAt: 9, Depth: 2, OldestAge: 7}
	k.Hist[histBin(1500)] = 4
	got, err := decodeBucket(encodeBucket(nil, k), 60)
	require.NoError(t, err)
	k.Start = 60
	require.Equal(t, k, got)
}

// A restore's records written over a bucket that an earlier command of
// the same batch changed leave what a batch of their own would: the
// records', so a leader and a follower that group entries differently
// agree.
func TestHistoryRestoredOverInOneBatch(t *testing.T) {
	t.Parallel()
	minute := time.Unix(1_800_000_000, 0).UTC()
	rel := keys.History(testNS, "q", keys.HistoryMinute, minute.UnixNano())[len(keys.Namespace(testNS)):]
	chunk := RestoreChunk.Command(&RestoreChunkCmd{NS: testNS, Token: "r1",
		Recs: []RestoreRecord{{Key: rel, Value: encodeBucket(nil, &Bucket{Enqueued: 7})}}})
	sample := HistorySample.Command(&HistorySampleCmd{NS: testNS, Samples: []QueueSample{{Queue: "q", Depth: 3}}})
	got := map[bool]*Bucket{}
	for _, together := range []bool{true, false} {
		f := historyFSM(t)
		f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "r1"})
		if together {
			for _, out := range f.loc.Apply(f.now, sample, chunk) {
				require.NoError(t, out.Err)
			}
		} else {
			require.NoError(t, f.loc.Apply(f.now, sample)[0].Err)
			require.NoError(t, f.loc.Apply(f.now, chunk)[0].Err)
		}
		f.apply(HistorySample.Type, &HistorySampleCmd{NS: testNS, Samples: []QueueSample{{Queue: "q", Depth: 5}}})
		b := f.buckets("q", keys.HistoryMinute)
		require.Len(t, b, 1)
		got[together] = b[0]
	}
	require.Equal(t, got[false], got[true])
	require.Equal(t, int64(7), got[true].Enqueued, "the restored bucket stands")
	require.Equal(t, int64(5), got[true].Depth, "and takes the next sample")
}
