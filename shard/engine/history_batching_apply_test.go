package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// A history trim in the same batch as an earlier entry's change to a
// bucket it trims: the member that applies the two in one batch ends as
// one that applies them apart does (the change written, then trimmed),
// not with the bucket written back after the trim.
func TestHistoryTrimIndependentOfBatching(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0).UTC()
	enq := func(i int) []byte {
		j := &job.Job{ID: fmt.Sprintf("job_%026d", i), Queue: "q", Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
		return Enqueue.Command(&EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}})
	}
	later := t0.Add(HistoryMinutes + 2*time.Minute) // the first minute bucket is past what the trim keeps
	log := []entry{
		{now: t0, cmds: [][]byte{HistoryStart.Command(&HistoryStartCmd{})}},
		{now: t0.Add(time.Second), cmds: [][]byte{enq(1)}},
		{now: later.Add(-time.Minute), cmds: [][]byte{enq(2)}},
		{now: later, cmds: [][]byte{HistoryTrim.Command(&HistoryTrimCmd{NS: testNS}), enq(3)}},
	}
	apart := replay(t, log)
	db := freshDB(t)
	reg := newScriptEngine().Registry()
	b := db.NewIndexedBatch()
	var txs []*replica.Tx
	for i, e := range log[1:] { // the start alone, then the rest in one batch
		if i == 0 {
			tx := replica.NewTx(b, log[0].now, 1)
			_, err := reg.Apply(tx, log[0].cmds[0])
			require.NoError(t, err)
			txs = append(txs, tx)
		}
		tx := replica.NewTx(b, e.now, uint64(i+2))
		for _, c := range e.cmds {
			_, err := reg.Apply(tx, c)
			require.NoError(t, err)
		}
		txs = append(txs, tx)
	}
	for _, tx := range txs {
		tx.RunBeforeCommit()
	}
	require.NoError(t, b.Commit(nil))
	require.NoError(t, b.Close())
	for _, tx := range txs {
		tx.RunAfterCommit()
	}
	require.Equal(t, string(apart), string(dump(t, db)))
}
