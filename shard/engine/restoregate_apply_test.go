package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// A client command into a namespace a restore is writing, proposed before
// the restore began, used to apply between its chunks. Once
// RestoreStartRefusing has applied it is refused, changing nothing, until
// the restore ends; the namespace's deletion still goes through; a log
// from before the start command applies as it did; a restart keeps the
// gate (the state holds it).
func TestRestoreRefusesCommandsIntoItsNamespace(t *testing.T) {
	f := setupFSM(t)
	enqueue := func() any {
		j := &job.Job{ID: f.e.newIDForTest(), Queue: "q", Backoff: job.BackoffFixed, BaseDelay: 1, MaxDelay: 1}
		return f.apply(Enqueue.Type, &EnqueueCmd{NS: restoreNS, Jobs: [][]byte{j.Encode()}})
	}
	begin := func() {
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "t", Replace: true}))
	}

	begin()
	_, accepted := enqueue().([]EnqueueResult)
	require.True(t, accepted, "before the start command a restoring namespace takes commands, as older logs did")

	require.Nil(t, f.apply(RestoreStartRefusing.Type, &RestoreStartCmd{}))
	require.True(t, RestoreRefusing(f.db))
	begin() // a restore taking over the interrupted one: it wipes what the enqueue wrote
	before := f.applied()
	require.ErrorIs(t, asErr(t, enqueue()), ErrRestoring)
	require.Equal(t, before, f.applied(), "a refused command changes nothing")
	require.False(t, HasData(f.db, restoreNS), "nothing of the refused enqueue was written")

	// A restart: a cold engine reads the gate from the state.
	e := New(Options{})
	loc, err := replica.NewLocal(f.db, e.Registry())
	require.NoError(t, err)
	f.e, f.loc = e, loc
	require.ErrorIs(t, asErr(t, enqueue()), ErrRestoring)

	_, ended := f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "t"}).(*RestoreEnded)
	require.True(t, ended)
	_, accepted = enqueue().([]EnqueueResult)
	require.True(t, accepted, "the restore ended")

	begin()
	for c := (&NamespacePurgeCmd{NS: restoreNS}); ; {
		st, ok := f.apply(NamespacePurge.Type, c).(*PurgeStep)
		require.True(t, ok, "deleting the namespace goes through")
		if st.Done {
			break
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	require.False(t, restoring(f.db, restoreNS), "and ends the restore")
	_, accepted = enqueue().([]EnqueueResult)
	require.True(t, accepted)
}

func asErr(t *testing.T, v any) error {
	t.Helper()
	err, ok := v.(error)
	require.True(t, ok, "refused: %v", v)
	return err
}

// applied is the store's count of job records, restore markers and keys
// of the restored namespace: what a refused command must leave as it was.
func (f *fsmBundle) applied() int {
	n := 0
	for _, p := range [][]byte{keys.Namespace(restoreNS), keys.RestoringPrefix()} {
		it, err := f.db.NewIter(nil)
		require.NoError(f.t, err)
		for ok := it.SeekGE(p); ok && len(it.Key()) >= len(p) && string(it.Key()[:len(p)]) == string(p); ok = it.Next() {
			n++
		}
		require.NoError(f.t, it.Close())
	}
	return n
}
