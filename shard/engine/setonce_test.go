package engine

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// setOnceCheck follows the batches a state machine commits and finds
// what would make a SingleDelete wrong (store.go, setOnce): a key of a
// setOnce kind set twice with no delete between, a SingleDelete of a key
// set more than once, or of a key of another kind.
type setOnceCheck struct {
	t       *testing.T
	sets    map[string]int // setOnce keys: SETs since their last delete
	singles int            // SingleDeletes seen
	bad     []string
}

func newSetOnceCheck(t *testing.T) *setOnceCheck {
	return &setOnceCheck{t: t, sets: map[string]int{}}
}

// kindOf is the kind byte of a namespace's key, 0 for any other key.
func kindOf(k []byte) byte {
	if i := bytes.IndexByte(k, 0); len(k) > 0 && k[0] != 0x01 && i > 0 && i+1 < len(k) {
		return k[i+1]
	}
	return 0
}

func (c *setOnceCheck) see(repr []byte) {
	r, _ := pebble.ReadBatch(repr)
	for {
		kind, k, v, ok, err := r.Next()
		require.NoError(c.t, err)
		if !ok {
			return
		}
		switch kind {
		case pebble.InternalKeyKindSet, pebble.InternalKeyKindSetWithDelete, pebble.InternalKeyKindMerge:
			if setOnce(kindOf(k)) {
				if c.sets[string(k)]++; c.sets[string(k)] > 1 {
					c.bad = append(c.bad, fmt.Sprintf("%q set again before it was deleted", k))
				}
			}
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindDeleteSized:
			delete(c.sets, string(k))
		case pebble.InternalKeyKindSingleDelete:
			c.singles++
			if !setOnce(kindOf(k)) {
				c.bad = append(c.bad, fmt.Sprintf("%q single-deleted, but its kind is not set once", k))
			}
			if c.sets[string(k)] > 1 {
				c.bad = append(c.bad, fmt.Sprintf("%q single-deleted after %d sets", k, c.sets[string(k)]))
			}
			delete(c.sets, string(k))
		case pebble.InternalKeyKindRangeDelete:
			for s := range c.sets {
				if s >= string(k) && s < string(v) {
					delete(c.sets, s)
				}
			}
		}
	}
}

// Every SingleDelete of random logs of every command meets one SET:
// no writer sets a pending- or lease-index key twice between deletes.
func TestSingleDeletesMeetOneSet(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		loc, err := replica.NewLocal(db, newScriptEngine().Registry())
		require.NoError(t, err)
		check := newSetOnceCheck(t)
		loc.SeeBatches(check.see)
		for _, e := range log {
			loc.Apply(e.now, e.cmds...)
		}
		require.NoError(t, db.Close())
		require.Positive(t, check.singles, "seed %d: the script single-deletes nothing", seed)
		require.Empty(t, check.bad, "seed %d", seed)
	}
}

// A restore's or a move's chunk sent again sets its records again: the
// pending- and lease-index keys among them stay set once, and the jobs
// are fetched and acked at the target.
func TestChunkSentAgainKeepsKeysSetOnce(t *testing.T) {
	for _, move := range []bool{false, true} {
		f := setupFSM(t)
		check := newSetOnceCheck(t)
		f.loc.SeeBatches(check.see)
		f.populate(testNS, 1)
		f.enqueueIn(testNS, &EnqueueCmd{}, &job.Job{Queue: "q"}) // a pending one
		active := f.activeJob(testNS)
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "mv"}))
		var recs []RestoreRecord
		for k, v := range f.records(testNS) {
			recs = append(recs, RestoreRecord{Key: []byte(k), Value: []byte(v)})
		}
		for range 2 {
			if move {
				require.Nil(t, f.apply(MoveChunk.Type, &MoveChunkCmd{NS: restoreNS, Token: "mv", Recs: recs}))
			} else {
				require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "mv", Recs: recs}))
			}
		}
		if move {
			f.apply(MoveEndMarked.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv"})
			require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: restoreNS, ID: active.ID, WorkerID: active.WorkerID}))
		} else {
			require.Equal(t, 1, f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "mv"}).(*RestoreEnded).Requeued)
		}
		require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: restoreNS, Queue: "q"})) // unpaused
		for {
			j, ok := f.apply(Fetch.Type, &FetchCmd{NS: restoreNS, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(60e9)}).(*job.Job)
			if !ok || j == nil {
				break
			}
			require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: restoreNS, ID: j.ID, WorkerID: "w"}))
		}
		q, ok := ReadQueue(f.db, restoreNS, "q")
		require.True(t, ok)
		require.Zero(t, q.Counts[job.Pending], "move %v", move)
		require.Positive(t, check.singles, "move %v", move)
		require.Empty(t, check.bad, "move %v", move)
	}
}
