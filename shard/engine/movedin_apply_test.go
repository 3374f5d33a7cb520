package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// movedIn reads ns's moved-in mark from the state.
func (f *fsmBundle) movedIn(ns string) (MovedIn, bool) {
	f.t.Helper()
	v, closer, err := f.db.Get(keys.MovedIn(ns))
	if err != nil {
		return MovedIn{}, false
	}
	defer closer.Close()
	return decodeMovedIn(v), true
}

// requireErr checks that out is exactly the error want (errors.Is would
// match any error of its code).
func requireErr(t *testing.T, want *apierr.Error, out any, msg string) {
	t.Helper()
	err, ok := out.(error)
	require.True(t, ok, "%s: not refused (%v)", msg, out)
	var got *apierr.Error
	require.ErrorAs(t, err, &got, msg)
	require.Same(t, want, got, "%s: %v", msg, err)
}

func (f *fsmBundle) abortMove(ns, token string) any {
	f.t.Helper()
	return f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: ns, Token: token})
}

// A move's end leaves the moved-in mark; while only the leader's loops
// have changed the namespace since (a lease reclaimed), the move's abort
// removes it as a restore's abort would (records, registry, stored
// bytes, the mark), and a later move into it begins.
func TestApplyMoveAbortAfterEndWipes(t *testing.T) {
	f := setupFSM(t)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	f.populate(testNS, 1)
	active := f.activeJob(testNS)
	f.move(testNS, restoreNS)
	in, ok := f.movedIn(restoreNS)
	require.True(t, ok, "the end leaves the mark")
	require.Equal(t, "mv", in.Token)
	require.NotZero(t, in.Index)
	require.False(t, in.Touched)
	require.NotZero(t, f.storedBytes(restoreNS))

	// The leader's loops go on in it: they do not touch it.
	f.advance(2 * time.Minute)
	require.Equal(t, 1, f.apply(ReclaimCounted.Type, &SweepCmd{NS: restoreNS, IDs: []string{active.ID}}))
	step := f.apply(BulkApplySettle.Type, &BulkCmd{NS: restoreNS, Action: job.BulkRetry, Op: fmt.Sprintf("bulk_%027d", 1), Done: true})
	require.IsType(t, &BulkOutcome{}, step, "the bulk operation's last step")
	in, _ = f.movedIn(restoreNS)
	require.False(t, in.Touched, "a loop's command is not a client's")

	// Another move's abort leaves it.
	before := f.dump(restoreNS)
	requireErr(t, ErrRestoreGone, f.abortMove(restoreNS, "other"), "")
	require.Equal(t, before, f.dump(restoreNS))

	require.Nil(t, f.abortMove(restoreNS, "mv"))
	require.Empty(t, f.dump(restoreNS), "no key and no registry entry left")
	require.Zero(t, f.storedBytes(restoreNS))
	_, ok = f.movedIn(restoreNS)
	require.False(t, ok)
	require.NotContains(t, Namespaces(f.db), restoreNS)
	requireErr(t, ErrRestoreGone, f.abortMove(restoreNS, "mv"), "nothing of it left to abort")

	// Another move of the namespace into this shard begins (it was 409).
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "mv2"}))
	require.Nil(t, f.abortMove(restoreNS, "mv2"))
	require.Equal(t, job.Active, f.jobIn(testNS, active.ID).State)
}

// Once a client's command changed the namespace after the end, the
// move's abort refuses (409, naming that it is live here) and removes
// nothing, with warm or cold caches; a refused client command does not
// count.
func TestApplyMoveAbortAfterClientCommandRefused(t *testing.T) {
	f := setupFSM(t)
	f.populate(testNS, 1)
	f.move(testNS, restoreNS)

	refused := f.apply(Ack.Type, &AckCmd{NS: restoreNS, ID: f.e.newIDForTest(), WorkerID: "w"})
	require.Error(t, refused.(error), "an ack of no job is refused")
	in, _ := f.movedIn(restoreNS)
	require.False(t, in.Touched, "a refused command changed nothing")

	f.enqueueIn(restoreNS, &EnqueueCmd{}, &job.Job{Queue: "q"})
	in, ok := f.movedIn(restoreNS)
	require.True(t, ok)
	require.True(t, in.Touched)
	require.Equal(t, "mv", in.Token)

	before := f.dump(restoreNS)
	err, _ := f.abortMove(restoreNS, "mv").(error)
	requireErr(t, ErrMovedInLive, err, "")
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err))
	require.Contains(t, err.Error(), "live on this shard")
	require.Equal(t, before, f.dump(restoreNS), "nothing removed")

	f.e.reset() // cold: the mark is replicated state
	requireErr(t, ErrMovedInLive, f.abortMove(restoreNS, "mv"), "")
	require.Equal(t, before, f.dump(restoreNS))
	f.enqueueIn(restoreNS, &EnqueueCmd{}, &job.Job{Queue: "q"})

	// The leader's idle sweep of restores never takes the moved-in path.
	out := f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv", Idle: 1})
	requireErr(t, ErrRestoreGone, out, "")

	// Its delete drops the mark with the namespace.
	f.purge(restoreNS, nil)
	_, ok = f.movedIn(restoreNS)
	require.False(t, ok)
}

// The end of a move again with its token (its answer was lost) is done,
// changing nothing; another token's end is refused; a restore's end
// leaves no mark; a move out of the namespace drops it.
func TestApplyMoveEndIdempotent(t *testing.T) {
	f := setupFSM(t)
	f.populate(testNS, 1)
	f.move(testNS, restoreNS)
	before := f.dump(restoreNS)
	in, _ := f.movedIn(restoreNS)

	f.advance(time.Second)
	out := f.apply(MoveEndMarked.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv"})
	require.Equal(t, &RestoreEnded{}, out)
	require.Equal(t, before, f.dump(restoreNS))
	again, _ := f.movedIn(restoreNS)
	require.Equal(t, in, again, "the mark is the first end's")
	requireErr(t, ErrRestoreGone, f.apply(MoveEndMarked.Type, &RestoreTokenCmd{NS: restoreNS, Token: "other"}), "")
	requireErr(t, ErrRestoreGone, f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv"}), "a restore's end is not a move's")

	// A restore's end leaves no mark, nor does a move's end of older logs
	// (move.end), which an abort after it leaves as it was.
	f.restore(testNS, otherNS, false, 5)
	_, ok := f.movedIn(otherNS)
	require.False(t, ok)
	const legacy = "t_01hx0000000000000000000006/legacy"
	require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: legacy, Token: "old"}))
	require.Nil(t, f.apply(MoveChunk.Type, &MoveChunkCmd{NS: legacy, Token: "old", Recs: []RestoreRecord{{Key: []byte(keys.Queue("", "z")[1:]), Value: replica.Encode(&QueueRecord{Name: "z", Counts: make([]int64, 8)})}}}))
	require.Zero(t, f.apply(MoveEnd.Type, &RestoreTokenCmd{NS: legacy, Token: "old"}).(*RestoreEnded).Requeued)
	_, ok = f.movedIn(legacy)
	require.False(t, ok)
	requireErr(t, ErrRestoreGone, f.apply(MoveEnd.Type, &RestoreTokenCmd{NS: legacy, Token: "old"}), "older logs' end again")
	requireErr(t, ErrRestoreGone, f.abortMove(legacy, "old"), "")
	require.NotEmpty(t, f.records(legacy))

	// Moved out again: the finish drops the mark.
	require.IsType(t, int64(0), f.fence(restoreNS, "out", time.Second))
	require.Nil(t, f.apply(MoveFinish.Type, &MoveFinishCmd{NS: restoreNS, Token: "out", To: "s3"}))
	_, ok = f.movedIn(restoreNS)
	require.False(t, ok)
	requireErr(t, ErrRestoreGone, f.abortMove(restoreNS, "mv"), "")
}
