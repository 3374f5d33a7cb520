package engine

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Restoring a backup into a namespace, as Raft entries of bounded size:
//
//   - RestoreBegin marks the namespace restoring (keys.Restoring, outside
//     the namespace, so it is replicated state a snapshot carries and a
//     restart keeps) under the restore's token. For a replace it deletes
//     everything under the namespace's prefix first; its usage (outside the
//     prefix) stays. A new restore into a namespace holding data is a
//     conflict, unless the data is what an interrupted restore left (the
//     marker is still there), which goes.
//   - RestoreChunk writes records (keys relative to the namespace) under
//     the prefix, only while the marker holds its token.
//   - RestoreEnd makes the namespace live: active jobs go back to pending
//     (their lease was on another worker's clock), caches and time-index
//     floors start over, parked fetches of its queues are woken, the
//     marker goes.
//   - RestoreAbort deletes everything under the prefix and the marker
//     (keeping the log's floor once the log is kept, eventkept.go).
//
// While the marker is set the API answers 503 for the namespace, the
// apply refuses clients' commands into it (restoregate.go), and the
// leader's loops leave it alone (it is out of the registry they walk).
var (
	RestoreBegin = replica.Op[RestoreBeginCmd, replica.None]{Type: 45, Name: "restore.begin"}
	RestoreChunk = replica.Op[RestoreChunkCmd, replica.None]{Type: 46, Name: "restore.chunk"}
	RestoreEnd   = replica.Op[RestoreTokenCmd, *RestoreEnded]{Type: 47, Name: "restore.end"}
	RestoreAbort = replica.Op[RestoreTokenCmd, replica.None]{Type: 48, Name: "restore.abort"}
)

// RestoreBeginCmd starts a restore into NS.
type RestoreBeginCmd struct {
	NS      string `codec:"ns"`
	Token   string `codec:"t"`
	Replace bool   `codec:"r,omitempty"`
}

// RestoreChunkCmd writes records of a restore.
type RestoreChunkCmd struct {
	NS    string          `codec:"ns"`
	Token string          `codec:"t"`
	Recs  []RestoreRecord `codec:"r"`
}

// RestoreRecord is one key/value pair, its key relative to the namespace
// (keys.Namespace removed).
type RestoreRecord struct {
	Key   []byte `codec:"k"`
	Value []byte `codec:"v"`
}

// RestoreTokenCmd ends or aborts the restore with Token into NS. An abort
// with Idle (ns) set is the leader's, of a restore nothing drives: it is
// refused unless the marker's last begin or chunk is at least Idle before
// the entry's clock, so a chunk that committed meanwhile keeps it.
type RestoreTokenCmd struct {
	NS    string `codec:"ns"`
	Token string `codec:"t"`
	Idle  int64  `codec:"idle,omitempty"`
}

// RestoreEnded is what RestoreEnd changed.
type RestoreEnded struct {
	Requeued int // active jobs put back to pending
}

// ErrRestoreNotIdle refuses the leader's abort of a restore that wrote
// since it looked.
var ErrRestoreNotIdle = apierr.New(apierr.Conflict, "the restore into this namespace wrote a chunk recently; it is not idle")

// ErrRestoreGone refuses a restore step whose restore is no longer the
// namespace's (aborted, taken over, or the namespace deleted).
var ErrRestoreGone = apierr.Retry(apierr.Conflict, 1, "the restore into this namespace is no longer running (another restore or a delete took over)")

// RestoreMarker is the token of the restore running into ns, if one is
// (safe from any goroutine, on the last applied state).
func RestoreMarker(r pebble.Reader, ns string) (string, bool) {
	m, ok := readRestoreMark(r, ns)
	return m.Token, ok
}

// HasData reports whether ns holds any key under its prefix but those of
// its event log (keys.IsEvent), which are the shard's own (eventkept.go):
// a namespace whose abort kept its floor is empty. One seek past each
// kind of the log's keys.
func HasData(r pebble.Reader, ns string) bool {
	p := keys.Namespace(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer func() { must(it.Close()) }()
	for ok := it.First(); ok; {
		k := it.Key()
		if !keys.IsEvent(k[len(p):]) {
			return true
		}
		ok = it.SeekGE(keys.PrefixEnd(k[:len(p)+1])) // the next kind
	}
	return false
}

func (e *Engine) applyRestoreBegin(tx *replica.Tx, c *RestoreBeginCmd) (replica.None, error) {
	if c.NS == "" || c.Token == "" {
		return replica.None{}, apierr.New(apierr.BadRequest, "a restore needs a namespace and a token")
	}
	f, _, moved := e.movesFSM.get(tx, c.NS)
	if f.holds(tx.Now.UnixNano()) {
		return replica.None{}, ErrFenced // its data is being moved out
	}
	_, interrupted := RestoreMarker(tx, c.NS)
	if !c.Replace && !interrupted && e.holdsData(tx, c.NS) {
		return replica.None{}, apierr.New(apierr.Conflict, "the namespace already holds data: restore into a new namespace, or replace it")
	}
	if moved {
		e.clearMoved(tx, c.NS) // it comes back here
	}
	if f.Token != "" {
		e.clearFence(tx, c.NS) // lapsed
	}
	e.clearMovedIn(tx, c.NS) // an earlier move's end is over
	e.wipeLogged(tx, c.NS)
	e.setRestoreMark(tx, c.NS, RestoreMark{Token: c.Token, At: tx.Now.UnixNano()})
	return replica.None{}, nil
}

// wipeNamespace deletes everything under ns's prefix in one range delete,
// with what the caches and the stored-bytes gauge knew of it, and takes
// ns out of the registry the leader's loops walk. Its usage stays.
func (e *Engine) wipeNamespace(tx *replica.Tx, ns string) {
	p := keys.Namespace(ns)
	must(tx.DeleteRange(p, keys.PrefixEnd(p), nil))
	e.eventsDeleted(tx, ns, p, keys.PrefixEnd(p))
	e.forgetRange(tx, ns, p, keys.PrefixEnd(p))
	e.floors.forget(ns)
	if e.usage.metering(tx) {
		e.storedDelta(tx, ns, -e.usage.gauge(tx, ns).bytes)
	}
	must(tx.Delete(keys.Registry(ns), nil))
}

func (e *Engine) restoreHeld(tx *replica.Tx, ns, token string) error {
	if t, ok := RestoreMarker(tx, ns); !ok || t != token {
		return ErrRestoreGone
	}
	return nil
}

func (e *Engine) applyRestoreChunk(tx *replica.Tx, c *RestoreChunkCmd) (replica.None, error) {
	if err := e.restoreHeld(tx, c.NS, c.Token); err != nil {
		return replica.None{}, err
	}
	if err := e.writeRestored(tx, c.NS, c.Recs, false); err != nil {
		return replica.None{}, err
	}
	e.setRestoreMark(tx, c.NS, RestoreMark{Token: c.Token, At: tx.Now.UnixNano()}) // not idle (RestoreTokenCmd.Idle)
	return replica.None{}, nil
}

// writeRestored writes records of a restore or move under ns's prefix. A
// job record adds the stored size it counted where it was backed up to
// ns's gauge (its key's length may differ by a few bytes here), so
// removing the job later takes back exactly what it added; over a job
// already there (replace: a move's later round), the old one's size is
// taken back first. The history's cached buckets of ns are settled first
// (historyCache.settle), and the cached budgets dropped: the records may
// hold them, and the encryption record (a move's chunk deletes after this
// too, in the same command). A record of the event log is left out once
// the log is kept (eventkept.go). The keys of each job's state come from
// its record (below).
func (e *Engine) writeRestored(tx *replica.Tx, ns string, recs []RestoreRecord, replace bool) error {
	jobs, err := restoredJobs(recs)
	if err != nil {
		return err // before anything is written
	}
	e.history.settle(tx, ns)
	e.forgetBudgets(ns)
	e.encryptionChanged(tx)
	p := keys.Namespace(ns)
	metering := e.usage.metering(tx)
	var key []byte
	for i, r := range recs {
		if !e.restoredKeyKept(tx, r.Key) {
			continue // the shard's own log (eventkept.go)
		}
		if setOnce(r.Key[0]) {
			continue // made from its job's record (stateKeys)
		}
		key = append(append(key[:0], p...), r.Key...)
		j := jobs[i]
		if j == nil {
			must(tx.Set(key, r.Value, nil))
			continue
		}
		if metering {
			if replace {
				e.storedDelta(tx, ns, -storedOf(tx, key))
			}
			e.storedDelta(tx, ns, j.Stored)
		}
		dropStateKeysOf(tx, ns, key)
		e.jobs.drop(j.ID) // a command between chunks may have cached the one it replaces
		must(tx.Set(key, r.Value, nil))
		for _, k := range stateKeys(ns, j) {
			if k != nil {
				must(tx.Delete(k, nil)) // a command between chunks may have set it: the next removal is a SingleDelete
				must(tx.Set(k, nil, nil))
			}
		}
	}
	return nil
}

// restoredJobs checks recs and decodes their job records (nil for any
// other record): each must be the job its key names.
func restoredJobs(recs []RestoreRecord) ([]*job.Job, error) {
	jobs := make([]*job.Job, len(recs))
	for i, r := range recs {
		switch {
		case len(r.Key) == 0:
			return nil, apierr.New(apierr.BadRequest, "a restored record has an empty key")
		case !IsJobKey(r.Key):
			continue
		}
		j := new(job.Job)
		if err := j.Decode(r.Value); err != nil {
			return nil, apierr.New(apierr.BadRequest, "job record %q does not decode: %v", r.Key[1:], err)
		}
		if j.ID != string(r.Key[1:]) { // its state's keys would name another job
			return nil, apierr.New(apierr.BadRequest, "job record %q holds job %q", r.Key[1:], j.ID)
		}
		jobs[i] = j
	}
	return jobs, nil
}

// A restore or a move writes no pending-, due-, lease- or state-index key
// from its stream: it makes them from each job record it writes, as
// addIndexes does, and deletes those of the record it replaces. Copied
// from the stream, such a key could name a job that is not in that state
// (a command that reached the namespace between two chunks, an edited
// stream, or a store an earlier fault left such a key in); the job's own
// set of it later would be a second set, and the SingleDelete after it
// would let the first come back (store.go, setOnce).

// stateKeys are the keys of j's state that are set once (store.go):
// addIndexes's, but for the keyed pending index (not set once).
func stateKeys(ns string, j *job.Job) (ks [2][]byte) {
	switch j.State {
	case job.Pending:
		if !j.Keyed() {
			ks[0] = keys.Pending(ns, j.Queue, uint8(j.Priority), j.CreatedAt, j.ID)
		}
	case job.Scheduled:
		ks[0] = keys.Timed(ns, keys.KindDue, j.ScheduledAt, j.ID)
	case job.Retrying:
		ks[0] = keys.Timed(ns, keys.KindDue, j.NextAttempt, j.ID)
	case job.Active:
		ks[0] = keys.Timed(ns, keys.KindLease, j.LeaseUntil, j.ID)
	}
	if stateIndexed(j.State) {
		ks[1] = keys.StateEntry(ns, uint8(j.State), j.Queue, j.CreatedAt, j.ID)
	}
	return ks
}

// dropStateKeysOf deletes the state keys of the job record stored at key,
// if there is one (a move's later round, a chunk sent again).
func dropStateKeysOf(tx *replica.Tx, ns string, key []byte) {
	v, closer, err := tx.Get(key)
	if err != nil {
		return
	}
	var old job.Job
	ok := old.Decode(v) == nil
	closer.Close()
	if !ok {
		return
	}
	for _, k := range stateKeys(ns, &old) {
		if k != nil {
			must(tx.Delete(k, nil))
		}
	}
}

// storedOf is the stored size the job record at key counted, 0 if none.
func storedOf(r pebble.Reader, key []byte) int64 {
	v, closer, err := r.Get(key)
	if err != nil {
		return 0
	}
	defer closer.Close()
	var j job.Job
	if j.Decode(v) != nil {
		return 0
	}
	return j.Stored
}

// IsJobKey reports whether a key relative to a namespace is a job record's.
func IsJobKey(rel []byte) bool { return len(rel) == 1+keys.JobIDLen && rel[0] == keys.KindJob }

// restoredTimeIndexes are the time indexes the leader sweeps from a floor:
// restored entries may lie below it.
var restoredTimeIndexes = []byte{keys.KindDue, keys.KindLease, keys.KindExpire, keys.KindPrune, keys.KindScheduleRun, keys.KindRecordPrune,
	keys.KindIdempotencyExpiry}

func (e *Engine) applyRestoreEnd(tx *replica.Tx, c *RestoreTokenCmd) (*RestoreEnded, error) {
	return e.endRestore(tx, c, endRestore)
}

// How endRestore ends: a restore's, a move's of older logs, a move's.
type endMode uint8

const (
	endRestore endMode = iota
	endMove
	endMoveMarked
)

// endRestore makes a restored namespace live. A restore requeues its
// active jobs; a move keeps them active with their leases, for the worker
// acks them at the target, and (endMoveMarked) leaves the moved-in mark
// (movedin.go), so its end again (its answer was lost) is done.
func (e *Engine) endRestore(tx *replica.Tx, c *RestoreTokenCmd, mode endMode) (*RestoreEnded, error) {
	if err := e.restoreHeld(tx, c.NS, c.Token); err != nil {
		if _, ended := e.movedInBy(tx, c.NS, c.Token); ended && mode == endMoveMarked {
			return &RestoreEnded{}, nil
		}
		return nil, err
	}
	requeue := mode == endRestore
	p := keys.Namespace(c.NS)
	// Nothing cached may predate the records; but what commands of this
	// entry changed before this one is written first, or the group would
	// lose it (an enqueue beside the end in one entry lost its count).
	e.queues.flush(tx)
	e.history.settle(tx, c.NS) // its buckets too: an enqueue's count beside the end was lost
	e.forgetRange(tx, c.NS, p, keys.PrefixEnd(p))
	out := &RestoreEnded{}
	// Active jobs come back pending: their worker never heard of this
	// namespace. The attempt does not count (as a release), the checkpoint
	// stays, and the time it ran is not metered again here.
	now := tx.Now.UnixNano()
	for _, id := range indexIDs(tx, keys.TimeIndex(c.NS, keys.KindLease)) {
		if !requeue {
			break
		}
		j, err := e.getJob(tx, c.NS, id)
		if err != nil || j.State != job.Active {
			continue
		}
		j.Record(now, job.EvLeaseReleased, "restored from a backup while active; attempt not counted")
		job.Unlease(j)
		j.StartedAt = 0
		to := job.SettleAttempt(j.CancelRequestedAt != 0, job.Pending)
		e.moveTo(tx, c.NS, j, to)
		e.putJob(tx, c.NS, j)
		out.Requeued++
	}
	for _, k := range restoredTimeIndexes {
		e.floors.inserted(c.NS, k, 0)
	}
	registerNamespace(tx, c.NS)
	e.clearRestoreMark(tx, c.NS)
	if mode == endMoveMarked {
		e.writeMovedIn(tx, c.NS, MovedIn{Token: c.Token, Index: tx.Index})
	}
	qp := keys.QueuePrefix(c.NS)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: qp, UpperBound: keys.PrefixEnd(qp)})
	must(err)
	for ok := it.First(); ok; ok = it.Next() {
		e.wake(tx, c.NS, string(it.Key()[len(qp):]), restoreWake)
	}
	must(it.Close())
	return out, nil
}

// restoreWake is how many parked fetches of each restored queue are woken:
// those that find nothing park again.
const restoreWake = 1 << 16

// indexIDs lists the job ids at the end of the keys under prefix.
func indexIDs(r pebble.Reader, prefix []byte) []string {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: keys.PrefixEnd(prefix)})
	must(err)
	defer func() { must(it.Close()) }()
	var ids []string
	for ok := it.First(); ok; ok = it.Next() {
		if k := it.Key(); len(k) >= keys.JobIDLen {
			ids = append(ids, string(k[len(k)-keys.JobIDLen:]))
		}
	}
	return ids
}

// applyRestoreAbort removes what the restore or move token wrote into ns
// while it holds the marker; after a move's end, as long as no client's
// command reached the namespace since (abortMovedIn).
func (e *Engine) applyRestoreAbort(tx *replica.Tx, c *RestoreTokenCmd) (replica.None, error) {
	if err := e.restoreHeld(tx, c.NS, c.Token); err != nil {
		if in, ended := e.movedInBy(tx, c.NS, c.Token); ended && c.Idle == 0 {
			return replica.None{}, e.abortMovedIn(tx, c.NS, in)
		}
		return replica.None{}, err
	}
	if c.Idle > 0 {
		if m, _ := readRestoreMark(tx, c.NS); tx.Now.UnixNano()-m.At < c.Idle {
			return replica.None{}, ErrRestoreNotIdle
		}
	}
	e.wipeAborted(tx, c.NS) // the floor the begin raised stays, once the log is kept
	e.clearRestoreMark(tx, c.NS)
	return replica.None{}, nil
}

// restoring reports whether a restore holds ns: commands of the leader's
// loops proposed before it began leave it alone.
func restoring(r pebble.Reader, ns string) bool {
	_, ok := RestoreMarker(r, ns)
	return ok
}
