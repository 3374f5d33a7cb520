package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

func (f *fsmBundle) fence(ns, token string, ttl time.Duration) any {
	f.t.Helper()
	return f.apply(MoveFence.Type, &MoveFenceCmd{NS: ns, Token: token, TTL: int64(ttl)})
}

func requireMoving(t *testing.T, out any, what string) {
	t.Helper()
	err, ok := out.(error)
	require.True(t, ok, "%s: not refused (%v)", what, out)
	require.Equal(t, apierr.NamespaceMoving, apierr.CodeOf(err), "%s: %v", what, err)
	require.Equal(t, 1, apierr.From(err).RetryAfter, what)
}

// activeJob is the job populate leaves active in ns.
func (f *fsmBundle) activeJob(ns string) *job.Job {
	f.t.Helper()
	for k := range f.records(ns) {
		if IsJobKey([]byte(k)) {
			if j := f.jobIn(ns, k[1:]); j.State == job.Active {
				return j
			}
		}
	}
	f.t.Fatal("no active job")
	return nil
}

// A fence refuses, in the apply, every command that would change its
// namespace (even one in the same entry, proposed before it), changing
// nothing, while another namespace goes on; another move cannot fence
// it; it lapses by the entry's clock; an unfence lifts it.
func TestApplyFenceRefusesWrites(t *testing.T) {
	f := setupFSM(t)
	f.populate(testNS, 1)
	f.populate(otherNS, 2)
	active := f.activeJob(testNS)
	before := f.dump(testNS)

	// A fence and an enqueue in one entry: the enqueue comes after it.
	enq := &EnqueueCmd{NS: testNS, Jobs: [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "q"}).Encode()}}
	outs := f.loc.Apply(f.now, MoveFence.Command(&MoveFenceCmd{NS: testNS, Token: "m1", TTL: int64(5 * time.Second)}), Enqueue.Command(enq))
	require.NoError(t, outs[0].Err)
	requireMoving(t, outs[1].Err, "enqueue in the fence's entry")
	require.Equal(t, wire.MovingFenced, f.e.Moving(f.db, testNS, f.now.UnixNano()))
	require.Empty(t, f.e.Moving(f.db, otherNS, f.now.UnixNano()))

	f.advance(time.Second)
	for what, c := range map[string]struct {
		typ replica.CommandType
		cmd any
	}{
		"enqueue":   {Enqueue.Type, enq},
		"fetch":     {Fetch.Type, &FetchCmd{NS: testNS, Queues: []string{"other"}, WorkerID: "w", LeaseNs: int64(time.Minute)}},
		"ack":       {Ack.Type, &AckCmd{NS: testNS, ID: active.ID, WorkerID: active.WorkerID}},
		"fail":      {Fail.Type, &FailCmd{NS: testNS, ID: active.ID, WorkerID: active.WorkerID, Error: "x"}},
		"heartbeat": {Heartbeat.Type, &HeartbeatCmd{NS: testNS, WorkerID: active.WorkerID, Jobs: []HeartbeatItem{{ID: active.ID}}}},
		"reclaim":   {ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{active.ID}}},
		"pause":     {QueuePause.Type, &QueueCmd{NS: testNS, Queue: "q"}},
		"schedule":  {ScheduleDelete.Type, &ScheduleIDCmd{NS: testNS, ID: "sch_00000000000000000000000001"}},
		"purge":     {NamespacePurge.Type, &NamespacePurgeCmd{NS: testNS}},
		"settings":  {NamespaceConfigure.Type, &NamespaceConfigCmd{NS: testNS}},
		"job op":    {JobCancel.Type, &JobOpCmd{NS: testNS, ID: active.ID}},
		"restore":   {RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "r", Replace: true}},
	} {
		requireMoving(t, f.apply(c.typ, c.cmd), what)
	}
	require.Equal(t, before, f.dump(testNS), "the fenced namespace did not change")
	f.enqueueIn(otherNS, &EnqueueCmd{}, &job.Job{Queue: "q"}) // another namespace goes on

	other := f.fence(testNS, "m2", 5*time.Second)
	require.Equal(t, apierr.Conflict, apierr.CodeOf(other.(error)), "another move's fence")
	require.Equal(t, f.now.Add(2*time.Second).UnixNano(), f.fence(testNS, "m1", 2*time.Second), "the same move extends its fence")

	// It lapses by the entry's clock.
	f.advance(2 * time.Second)
	require.Empty(t, f.e.Moving(f.db, testNS, f.now.UnixNano()))
	ids := f.enqueueIn(testNS, &EnqueueCmd{}, &job.Job{Queue: "q"})
	require.Len(t, ids, 1)

	// Lapsed, another move may fence it; an unfence of that move lifts it
	// at once, and one of a move without a fence changes nothing.
	require.IsType(t, int64(0), f.fence(testNS, "m3", time.Minute))
	requireMoving(t, f.apply(Heartbeat.Type, &HeartbeatCmd{NS: testNS, WorkerID: active.WorkerID, Jobs: []HeartbeatItem{{ID: active.ID}}}), "heartbeat")
	require.Nil(t, f.apply(MoveUnfence.Type, &MoveTokenCmd{NS: testNS, Token: "m1"}))
	require.Equal(t, wire.MovingFenced, f.e.Moving(f.db, testNS, f.now.UnixNano()), "another move's unfence")
	require.Nil(t, f.apply(MoveUnfence.Type, &MoveTokenCmd{NS: testNS, Token: "m3"}))
	require.Nil(t, f.apply(MoveUnfence.Type, &MoveTokenCmd{NS: testNS, Token: "m3"}), "idempotent")
	require.False(t, f.has(keys.MoveFence(testNS)))
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: active.ID, WorkerID: active.WorkerID}))

	// Bad input, and a namespace a restore holds.
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(f.fence(testNS, "m4", time.Millisecond).(error)))
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(f.fence(testNS, "", time.Second).(error)))
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "r"}))
	require.Equal(t, apierr.Conflict, apierr.CodeOf(f.fence(restoreNS, "m4", time.Second).(error)))
}

// Finish removes the namespace's keys and registry entry (its usage
// stays), leaves the moved tombstone that refuses every command; it is
// idempotent and needs the move's fence; a restore (a move back) into
// the namespace clears the tombstone.
func TestApplyMoveFinishWipesAndTombstones(t *testing.T) {
	f := setupFSM(t)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	f.populate(testNS, 1)
	require.NotZero(t, f.storedBytes(testNS))
	meters := f.meters(testNS, f.now)

	fin := &MoveFinishCmd{NS: testNS, Token: "m1", To: "shard-2"}
	require.Equal(t, apierr.Conflict, apierr.CodeOf(f.apply(MoveFinish.Type, fin).(error)), "finish without a fence")
	require.NotEmpty(t, f.records(testNS))
	require.IsType(t, int64(0), f.fence(testNS, "m1", time.Second))
	f.advance(time.Minute) // a late finish: the fence lapsed, the move still owns it
	require.Nil(t, f.apply(MoveFinish.Type, fin))
	require.Empty(t, f.dump(testNS), "no key and no registry entry left")
	require.False(t, f.has(keys.MoveFence(testNS)))
	require.True(t, f.has(keys.Moved(testNS)))
	require.Zero(t, f.storedBytes(testNS))
	after := f.meters(testNS, f.now)
	after.StorageByteMs, meters.StorageByteMs = 0, 0 // it accrued meanwhile
	require.Equal(t, meters, after, "usage stays")
	require.Equal(t, wire.MovingMoved, f.e.Moving(f.db, testNS, f.now.UnixNano()))
	require.NotContains(t, Namespaces(f.db), testNS)

	requireMoving(t, f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "q"}).Encode()}}), "enqueue once moved")
	requireMoving(t, f.apply(NamespacePurge.Type, &NamespacePurgeCmd{NS: testNS}), "purge once moved")
	require.Nil(t, f.apply(MoveFinish.Type, fin), "idempotent")
	require.Equal(t, apierr.Conflict, apierr.CodeOf(f.fence(testNS, "m2", time.Second).(error)), "a moved namespace is not fenced again")

	// Cold caches read the same tombstone.
	f.e.reset()
	require.Equal(t, wire.MovingMoved, f.e.Moving(f.db, testNS, f.now.UnixNano()))
	requireMoving(t, f.apply(QueuePause.Type, &QueueCmd{NS: testNS, Queue: "q"}), "pause once moved, cold")

	// A move back begins: the tombstone goes.
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "back"}))
	require.False(t, f.has(keys.Moved(testNS)))
	require.Empty(t, f.e.Moving(f.db, testNS, f.now.UnixNano()))
	require.Nil(t, f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: testNS, Token: "back"}))
	f.enqueueIn(testNS, &EnqueueCmd{}, &job.Job{Queue: "q"})
}

// move copies src's records into dst as a move does (begin, chunks, end)
// and returns MoveEnd's answer.
func (f *fsmBundle) move(src, dst string) *RestoreEnded {
	f.t.Helper()
	require.Nil(f.t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: dst, Token: "mv"}))
	c := &MoveChunkCmd{NS: dst, Token: "mv"}
	for k, v := range f.records(src) {
		c.Recs = append(c.Recs, RestoreRecord{Key: []byte(k), Value: []byte(v)})
	}
	require.Nil(f.t, f.apply(MoveChunk.Type, c))
	return f.apply(MoveEndMarked.Type, &RestoreTokenCmd{NS: dst, Token: "mv"}).(*RestoreEnded)
}

// A move's end keeps every record as the source had it: the active job
// stays active with its lease, attempt and lease index entry, and its
// worker heartbeats and acks it at the target.
func TestApplyMoveEndKeepsActiveJobs(t *testing.T) {
	f := setupFSM(t)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	f.populate(testNS, 1)
	active := f.activeJob(testNS)
	src := f.records(testNS)

	out := f.move(testNS, restoreNS)
	require.Zero(t, out.Requeued)
	require.Equal(t, src, f.records(restoreNS), "record for record")
	require.True(t, f.has(keys.Registry(restoreNS)))
	require.False(t, f.marked(restoreNS))
	require.Equal(t, f.storedBytes(testNS), f.storedBytes(restoreNS))
	require.Equal(t, f.jobsStored(restoreNS), f.storedBytes(restoreNS))

	j := f.jobIn(restoreNS, active.ID)
	require.Equal(t, job.Active, j.State)
	require.Equal(t, active.LeaseUntil, j.LeaseUntil)
	require.Equal(t, active.Attempt, j.Attempt)
	require.True(t, f.has(keys.Timed(restoreNS, keys.KindLease, active.LeaseUntil, active.ID)))
	st := f.apply(Heartbeat.Type, &HeartbeatCmd{NS: restoreNS, WorkerID: active.WorkerID, Jobs: []HeartbeatItem{{ID: active.ID}}}).([]string)
	require.Equal(t, []string{wire.HeartbeatOK}, st)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: restoreNS, ID: active.ID, WorkerID: active.WorkerID}))
	// Its lease ran out on the target instead: reclaimed there, once.
	f2 := setupFSM(t)
	f2.populate(testNS, 1)
	a2 := f2.activeJob(testNS)
	f2.move(testNS, restoreNS)
	f2.advance(2 * time.Minute)
	require.Equal(t, 1, f2.apply(ReclaimCounted.Type, &SweepCmd{NS: restoreNS, IDs: []string{a2.ID}}))
	require.NotEqual(t, job.Active, f2.jobIn(restoreNS, a2.ID).State)
}

// Later rounds set changed records and delete gone ones; the target ends
// equal to the source, with a stored-bytes gauge that matches its jobs.
func TestApplyMoveChunkSetsAndDeletes(t *testing.T) {
	f := setupFSM(t)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	f.populate(testNS, 1)
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "mv"}))
	round := func(prev map[string]string) map[string]string {
		cur := f.records(testNS)
		c := &MoveChunkCmd{NS: restoreNS, Token: "mv"}
		for k, v := range cur {
			if old, ok := prev[k]; !ok || old != v {
				c.Recs = append(c.Recs, RestoreRecord{Key: []byte(k), Value: []byte(v)})
			}
		}
		for k := range prev {
			if _, ok := cur[k]; !ok {
				c.Dels = append(c.Dels, []byte(k))
			}
		}
		require.Nil(t, f.apply(MoveChunk.Type, c))
		return cur
	}
	seen := round(nil)
	// Between rounds: an ack, a discard, new jobs with big payloads.
	active := f.activeJob(testNS)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: active.ID, WorkerID: active.WorkerID, Result: []byte(`"a long result to store"`)}))
	var gone string
	for k := range seen {
		if IsJobKey([]byte(k)) && f.jobIn(testNS, k[1:]).State == job.Scheduled {
			gone = k[1:]
		}
	}
	require.Nil(t, f.apply(JobDiscard.Type, &JobOpCmd{NS: testNS, ID: gone}))
	f.enqueueIn(testNS, &EnqueueCmd{}, &job.Job{Queue: "q", Payload: []byte(`{"big":"` + string(make([]byte, 100)) + `"}`)})
	seen = round(seen)
	require.NotContains(t, seen, string(keys.Job("", gone)[1:]))
	require.Equal(t, seen, f.records(restoreNS))
	require.Equal(t, f.storedBytes(testNS), f.storedBytes(restoreNS))
	require.Equal(t, f.jobsStored(restoreNS), f.storedBytes(restoreNS))

	// Refused: another token, an empty key (nothing written).
	err := f.apply(MoveChunk.Type, &MoveChunkCmd{NS: restoreNS, Token: "x", Dels: [][]byte{[]byte("qq")}})
	require.ErrorIs(t, err.(error), ErrRestoreGone)
	err = f.apply(MoveChunk.Type, &MoveChunkCmd{NS: restoreNS, Token: "mv", Dels: [][]byte{[]byte("qq"), nil}})
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(err.(error)))
	require.Equal(t, seen, f.records(restoreNS))
	require.Zero(t, f.apply(MoveEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv"}).(*RestoreEnded).Requeued)
}
