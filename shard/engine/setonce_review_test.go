package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// restoredWithStalePending restores a namespace of one pending job into
// restoreNS so that the restore ends with the job cancelled and its
// pending-index key in the stream: split (true) cancels the job between
// the chunk holding its record and the one holding its pending key (a
// client's cancel that reached the log after the restore began: the
// engine takes commands into a restoring namespace); otherwise the stream
// itself holds a cancelled job with a pending key left over (an edited
// stream, or a store an earlier fault left such a key in). It returns the
// job's id and its pending key.
func restoredWithStalePending(t *testing.T, f *fsmBundle, split bool) (string, []byte) {
	id := f.enqueue(&job.Job{Queue: "q"})
	src := f.job(id)
	pk := keys.Pending(restoreNS, "q", uint8(src.Priority), src.CreatedAt, id)
	if !split {
		require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: testNS, ID: id}))
	}
	var recs, pending []RestoreRecord
	for k, v := range f.records(testNS) {
		r := RestoreRecord{Key: []byte(k), Value: []byte(v)}
		if k[0] == keys.KindPending {
			continue // the second chunk's
		}
		recs = append(recs, r)
	}
	pending = append(pending, RestoreRecord{Key: pk[len(keys.Namespace(restoreNS)):]})
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "tok"}))
	require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "tok", Recs: recs}))
	if split {
		require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: restoreNS, ID: id}))
	}
	require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "tok", Recs: pending}))
	f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "tok"})
	require.Equal(t, job.Cancelled, f.jobIn(restoreNS, id).State)
	return id, pk
}

// A restore makes a job's pending-index key from its record, never from
// the stream: copied from it, a key naming a job that is not pending was
// set again when the job was retried, with no delete between; the fetch's
// SingleDelete then met two sets, and once the memtable was flushed the
// older one was back, naming a job that is active (a later fetch's
// illegal-transition panic), on whichever member flushed it so.
func TestRestoredStaleKeyIsNotSetTwice(t *testing.T) {
	for _, split := range []bool{true, false} {
		f := setupFSM(t)
		check := newSetOnceCheck(t)
		f.loc.SeeBatches(check.see)
		id, pk := restoredWithStalePending(t, f, split)
		assert.False(t, f.has(pk), "split %v: a pending key names the cancelled job", split)
		require.Equal(t, job.Pending, f.apply(JobRetry.Type, &JobOpCmd{NS: restoreNS, ID: id}))
		require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: restoreNS, Queue: "q"})) // unpaused
		j, ok := f.apply(Fetch.Type, &FetchCmd{NS: restoreNS, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(60e9)}).(*job.Job)
		require.True(t, ok, "split %v", split)
		require.Equal(t, id, j.ID)
		require.NoError(t, f.db.Flush())
		assert.Empty(t, check.bad, "split %v", split)
		assert.False(t, f.has(pk), "split %v: the fetched job's pending key came back", split)
	}
}

// A move's later round replaces a job record a command changed at the
// target between rounds: the keys of the state that command left go with
// the record it replaces. Left, the cancelled job's state-index key was
// set again when the job was cancelled once more, with no delete between.
func TestMoveRoundDropsTheReplacedRecordsKeys(t *testing.T) {
	f := setupFSM(t)
	check := newSetOnceCheck(t)
	f.loc.SeeBatches(check.see)
	id := f.enqueue(&job.Job{Queue: "q"})
	round := func(since map[string]string) map[string]string {
		now := f.records(testNS)
		c := &MoveChunkCmd{NS: restoreNS, Token: "mv"}
		for k, v := range now {
			if old, ok := since[k]; !ok || old != v {
				c.Recs = append(c.Recs, RestoreRecord{Key: []byte(k), Value: []byte(v)})
			}
		}
		for k := range since {
			if _, ok := now[k]; !ok {
				c.Dels = append(c.Dels, []byte(k))
			}
		}
		require.Nil(t, f.apply(MoveChunk.Type, c))
		return now
	}
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "mv"}))
	first := round(nil)
	require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: restoreNS, ID: id})) // between rounds
	require.Equal(t, id, f.fetch("q").ID)                                                        // at the source
	round(first)
	f.apply(MoveEndMarked.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv"})
	j := f.jobIn(restoreNS, id)
	require.Equal(t, job.Active, j.State)
	assert.False(t, f.has(keys.StateEntry(restoreNS, uint8(job.Cancelled), "q", j.CreatedAt, id)), "the cancel's state-index key is left")
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: restoreNS, ID: id, WorkerID: "w"}))
	require.Equal(t, job.Pending, f.apply(JobRetry.Type, &JobOpCmd{NS: restoreNS, ID: id}))
	require.Equal(t, wire.CancelDone, f.apply(JobCancel.Type, &JobOpCmd{NS: restoreNS, ID: id}))
	assert.Empty(t, check.bad)
}

// A restored job record must be the job its key names: the keys of its
// state are made from it. Refused, the chunk writes nothing.
func TestRestoredJobRecordNamesItsJob(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	other := f.job(id)
	other.ID = f.e.newIDForTest()
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "tok"}))
	err, _ := f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "tok",
		Recs: []RestoreRecord{{Key: []byte("q"), Value: []byte("x")}, {Key: keys.Job(restoreNS, id)[len(keys.Namespace(restoreNS)):], Value: other.Encode()}}}).(error)
	require.Error(t, err)
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(err))
	require.Contains(t, err.Error(), id)
	require.Empty(t, f.records(restoreNS))
}
