package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// A keyed job's pending key still comes from a restore's stream: a key
// naming a job that is not pending (a cancel between the chunk of its
// record and the chunk of its key, or an edited stream) reached the
// fetch, whose illegal transition stopped every member at the same entry,
// again at each restart. The fetch drops such a key, and its group's key
// if nothing else is in the group, and takes the next job. With no other
// keyed job restored, the key lies unread until a job of its group is
// enqueued.
func TestFetchDropsAStaleKeyedPendingKey(t *testing.T) {
	for _, c := range []struct{ split, alone bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		f := setupFSM(t)
		check := newSetOnceCheck(t)
		f.loc.SeeBatches(check.see)
		stale := f.keyed("q", "tenant-a", "", job.Normal)
		live := ""
		if !c.alone {
			live = f.keyed("q", "tenant-b", "", job.Normal) // another group
		}
		src := f.job(stale)
		sk := keys.KeyedPending(restoreNS, "q", uint8(src.Priority), "tenant-a", "", src.CreatedAt, stale)
		gk := keys.KeyedGroup(restoreNS, "q", uint8(src.Priority), "tenant-a", "")
		if !c.split {
			require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: testNS, ID: stale}))
		}
		var recs, keyed []RestoreRecord
		for k, v := range f.records(testNS) {
			r := RestoreRecord{Key: []byte(k), Value: []byte(v)}
			if k[0] == keys.KindKeyedPending || k[0] == keys.KindKeyedGroup {
				keyed = append(keyed, r) // the second chunk's
				continue
			}
			recs = append(recs, r)
		}
		if !c.split { // the edited stream's
			keyed = append(keyed, RestoreRecord{Key: sk[len(keys.Namespace(restoreNS)):]}, RestoreRecord{Key: gk[len(keys.Namespace(restoreNS)):]})
		}
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "tok"}))
		require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "tok", Recs: recs}))
		if c.split {
			require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: restoreNS, ID: stale}))
		}
		require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "tok", Recs: keyed}))
		f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "tok"})
		require.Equal(t, job.Cancelled, f.jobIn(restoreNS, stale).State)
		require.True(t, f.has(sk), "%+v: the stream's key names the cancelled job", c)
		if c.alone {
			j := &job.Job{ID: f.e.newIDForTest(), Queue: "q", Priority: job.Normal, Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
			j.SetKeys("", "tenant-a")
			res := f.apply(Enqueue.Type, &EnqueueCmd{NS: restoreNS, Jobs: [][]byte{j.Encode()}}).([]EnqueueResult)
			live = res[0].JobID
		}

		fetch := func() any {
			return f.apply(Fetch.Type, &FetchCmd{NS: restoreNS, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(time.Minute)})
		}
		j, ok := fetch().(*job.Job)
		require.True(t, ok, "%+v", c)
		assert.Equal(t, live, j.ID, "%+v: the live job is taken", c)
		assert.False(t, f.has(sk), "%+v: the stale key is gone", c)
		assert.False(t, f.has(gk), "%+v: the emptied group's key is gone", c)
		assert.Equal(t, job.Cancelled, f.jobIn(restoreNS, stale).State, "%+v", c)
		assert.Nil(t, fetch(), "%+v", c)
		require.NoError(t, f.db.Flush())
		assert.Empty(t, check.bad, "%+v", c)
	}
}

// A pending key naming a job that is no longer pending, left in a store
// by an older build (a restore that copied it from its stream), is
// dropped by the fetch that finds it, with a delete that removes every
// set of it, instead of stopping the node; the next job is taken.
func TestFetchDropsAStalePendingKey(t *testing.T) {
	f := setupFSM(t)
	stale := f.enqueue(&job.Job{Queue: "q"})
	f.advance(time.Millisecond)
	live := f.enqueue(&job.Job{Queue: "q"})
	src := f.job(stale)
	require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: testNS, ID: stale}))
	pk := keys.Pending(testNS, "q", uint8(src.Priority), src.CreatedAt, stale)
	for range 2 { // set twice, as an older build's restore sent again could
		require.NoError(t, f.db.Set(pk, nil, nil))
		require.NoError(t, f.db.Flush())
	}
	// A restart: nothing of the engine's hints knows the key.
	e := New(Options{})
	loc, err := replica.NewLocal(f.db, e.Registry())
	require.NoError(t, err)
	f.e, f.loc = e, loc

	j := f.fetch("q")
	require.NotNil(t, j)
	assert.Equal(t, live, j.ID)
	assert.False(t, f.has(pk), "the stale key is gone")
	require.NoError(t, f.db.Compact(keys.Namespace(testNS), keys.PrefixEnd(keys.Namespace(testNS)), true))
	assert.False(t, f.has(pk), "no older set of it is back")
	assert.Equal(t, job.Cancelled, f.job(stale).State)
	assert.Nil(t, f.apply(Fetch.Type, &FetchCmd{NS: testNS, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(time.Minute)}))
}

// TimedKeyLive holds a time index key live only while its job is in the
// state, and at the time, the key stands for: due, lease, expire and prune
// keys through a job's life, and none for a job never stored.
func TestTimedKeyLiveFollowsTheJob(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", ExpireAfter: int64(time.Hour)})
	j := f.job(id)
	live := func(kind byte, at int64) bool { return TimedKeyLive(f.db, testNS, kind, at, id) }
	assert.True(t, live(keys.KindExpire, j.ExpireAt), "pending, with a TTL")
	assert.False(t, live(keys.KindExpire, j.ExpireAt+1), "another time")
	assert.False(t, live(keys.KindDue, j.CreatedAt), "pending is not due")

	j = f.fetch("q")
	require.Equal(t, id, j.ID)
	assert.True(t, live(keys.KindLease, j.LeaseUntil))
	assert.False(t, live(keys.KindLease, j.LeaseUntil-1))

	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id}))
	j = f.job(id)
	assert.False(t, live(keys.KindLease, j.LeaseUntil), "no longer active")
	assert.False(t, live(keys.KindExpire, j.ExpireAt), "finished: no TTL")
	require.NotZero(t, j.PruneAt)
	assert.True(t, live(keys.KindPrune, j.PruneAt))

	sched := f.enqueue(&job.Job{Queue: "q", State: job.Scheduled, ScheduledAt: f.now.Add(time.Minute).UnixNano()})
	assert.True(t, TimedKeyLive(f.db, testNS, keys.KindDue, f.job(sched).ScheduledAt, sched))
	assert.False(t, TimedKeyLive(f.db, testNS, keys.KindDue, 1, "job_99999999999999999999999999"), "never stored")
}
