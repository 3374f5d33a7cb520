package engine

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Every write of job state follows the same steps: load the record, decide
// the change (the job package decides which changes are legal), make it
// through one of the helpers below, and putJob. The helpers are the only
// code that touches indexes and queue counts: insertJob (a new job, in its
// job.Initial state), moveTo (a state change through the transition
// table) and its named forms kill and requeueAs, changeQueue,
// reprioritize, removeJob and discard. All of it goes into the entry's one
// batch.

// ReadJob reads a job from r (a store or a batch) without the cache.
func ReadJob(r pebble.Reader, ns, id string) (*job.Job, error) {
	v, closer, err := r.Get(keys.Job(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "job %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("shard: read job %s: %w", id, err)
	}
	defer closer.Close()
	j := new(job.Job)
	if err := j.Decode(v); err != nil {
		return nil, fmt.Errorf("shard: decode job %s: %w", id, err)
	}
	return j, nil
}

// readRecord reads the msgpack record at key: a batch, a schedule, a bulk
// operation. A missing one is apierr NotFound naming what and id.
func readRecord[T any](r pebble.Reader, key []byte, what, id string) (*T, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "%s %s not found", what, id)
	}
	if err != nil {
		return nil, fmt.Errorf("shard: read %s %s: %w", what, id, err)
	}
	defer closer.Close()
	rec := new(T)
	if err := replica.Decode(v, rec); err != nil {
		return nil, fmt.Errorf("shard: decode %s %s: %w", what, id, err)
	}
	return rec, nil
}

// insertJob writes a new job in its initial state (job.Initial) with its
// indexes. The job cache keeps j itself (putNewJob): the caller changes
// it after this only to write it again.
func (e *Engine) insertJob(tx *replica.Tx, ns string, j *job.Job) {
	if !job.Allowed(job.New, j.State) {
		panic(fmt.Sprintf("shard: job %s: a new job cannot start %s", j.ID, j.State))
	}
	j.Stored = 0 // no record yet, whatever the job was made from
	e.addIndexes(tx, ns, j)
	addSearchEntries(tx, ns, j)
	if j.ExpireAt != 0 {
		e.setTimed(tx, ns, keys.KindExpire, j.ExpireAt, j.ID)
	}
	e.queues.count(tx, ns, j.Queue, 0, j.State)
	e.observe(tx, ns, j, 0)
	e.putNewJob(tx, ns, j)
}

// moveTo changes j's state, keeping indexes and counts in step. The caller
// has set the fields the new state's index needs (NextAttempt, LeaseUntil…).
func (e *Engine) moveTo(tx *replica.Tx, ns string, j *job.Job, to job.State) {
	if !job.Allowed(j.State, to) {
		panic(fmt.Sprintf("shard: job %s: illegal transition %s -> %s", j.ID, j.State, to))
	}
	e.removeIndexes(tx, ns, j)
	from := j.State
	j.State = to
	e.addIndexes(tx, ns, j)
	if to.Terminal() {
		if j.ExpireAt != 0 {
			must(tx.Delete(keys.Timed(ns, keys.KindExpire, j.ExpireAt, j.ID), nil))
		}
		releaseUnique(tx, ns, j)
	}
	e.queues.count(tx, ns, j.Queue, from, to)
	e.observe(tx, ns, j, from)
}

// kill moves j to dead with its reason.
func (e *Engine) kill(tx *replica.Tx, ns string, j *job.Job, reason string) {
	j.DeadReason = reason
	e.moveTo(tx, ns, j, job.Dead)
}

// requeueAs puts a finished job back in line (to, as the caller decided):
// what its last run left (dead reason, cancel mark, lease, worker) is
// cleared and a TTL starts again from now; its errors stay. It writes the
// job and wakes its queue.
func (e *Engine) requeueAs(tx *replica.Tx, ns string, j *job.Job, to job.State) {
	j.DeadReason, j.CancelRequestedAt, j.NextAttempt, j.LeaseUntil = "", 0, 0, 0
	j.WorkerID, j.Hostname = "", ""
	if j.ExpireAfter > 0 {
		j.ExpireAt = tx.Now.UnixNano() + j.ExpireAfter
		e.setTimed(tx, ns, keys.KindExpire, j.ExpireAt, j.ID)
	}
	e.moveTo(tx, ns, j, to)
	e.putJob(tx, ns, j)
	e.wake(tx, ns, j.Queue, 1)
}

// changeQueue moves j to another queue in the same state: its indexes,
// counts and dead-index entry follow it. A unique lock it held belongs to
// the old queue's key space and is released.
func (e *Engine) changeQueue(tx *replica.Tx, ns string, j *job.Job, to string) {
	from := j.Queue
	e.removeIndexes(tx, ns, j)
	releaseUnique(tx, ns, j)
	if j.State == job.Dead && j.DeadAt != 0 {
		must(tx.Delete(keys.Dead(ns, from, j.DeadAt, j.ID), nil))
		must(tx.Set(keys.Dead(ns, to, j.DeadAt, j.ID), nil, nil))
	}
	e.queues.dropCount(tx, ns, from, j.State)
	j.Queue = to
	e.addIndexes(tx, ns, j)
	e.queues.count(tx, ns, to, 0, j.State)
}

// reprioritize gives j another priority; a pending job moves in its
// queue's fetch order.
func (e *Engine) reprioritize(tx *replica.Tx, ns string, j *job.Job, p job.Priority) {
	e.removeIndexes(tx, ns, j)
	j.Priority = p
	e.addIndexes(tx, ns, j)
}

// removeJob deletes j's record and every key that names it.
func (e *Engine) removeJob(tx *replica.Tx, ns string, j *job.Job) {
	e.removeIndexes(tx, ns, j)
	dropSearchEntries(tx, ns, j)
	if j.ExpireAt != 0 && !j.State.Terminal() {
		must(tx.Delete(keys.Timed(ns, keys.KindExpire, j.ExpireAt, j.ID), nil))
	}
	releaseUnique(tx, ns, j)
	if j.DeadAt != 0 {
		dropDeadIndex(tx, ns, j)
	}
	if j.PruneAt != 0 {
		must(tx.Delete(keys.Timed(ns, keys.KindPrune, j.PruneAt, j.ID), nil))
	}
	e.queues.dropCount(tx, ns, j.Queue, j.State)
	if j.State == job.Active {
		e.attemptEnded(tx, ns, j)
	}
	e.deleteJobRecord(tx, ns, j)
}

// discard deletes j as a user asked (delete, bulk delete, clear, queue
// delete): what waits on an unfinished j is settled first, as if it had
// failed (settleRemoved), then j goes like removeJob. Pruning a finished
// job needs no settling and uses removeJob.
func (e *Engine) discard(tx *replica.Tx, ns string, j *job.Job) {
	e.settleRemoved(tx, ns, j)
	e.removeJob(tx, ns, j)
}

func (e *Engine) addIndexes(tx *replica.Tx, ns string, j *job.Job) {
	switch j.State {
	case job.Pending:
		if j.Keyed() {
			e.addKeyed(tx, ns, j)
			break
		}
		k := keys.Pending(ns, j.Queue, uint8(j.Priority), j.CreatedAt, j.ID)
		must(tx.Set(k, nil, nil))
		e.heads.inserted(ns, j.Queue, k)
	case job.Scheduled:
		e.setTimed(tx, ns, keys.KindDue, j.ScheduledAt, j.ID)
	case job.Retrying:
		e.setTimed(tx, ns, keys.KindDue, j.NextAttempt, j.ID)
	case job.Active:
		e.setTimed(tx, ns, keys.KindLease, j.LeaseUntil, j.ID)
		if j.ConcurrencyKey() != "" {
			e.keyMoved(tx, ns, j, 1, 0)
		}
	}
	if stateIndexed(j.State) {
		must(tx.Set(keys.StateEntry(ns, uint8(j.State), j.Queue, j.CreatedAt, j.ID), nil, nil))
	}
}

// stateIndexed says which states the search index by state and queue
// holds: those with no per-queue index of their own. Search reads pending
// jobs from the pending index and active ones from the lease index, so the
// hot path of a job (pending, active) writes no search entries.
func stateIndexed(s job.State) bool {
	switch s {
	case job.Pending, job.Active:
		return false
	}
	return true
}

// setTimed adds a job to a time index and tells the sweep where to look.
func (e *Engine) setTimed(tx *replica.Tx, ns string, kind byte, at int64, id string) {
	must(tx.Set(keys.Timed(ns, kind, at, id), nil, nil))
	e.floors.inserted(ns, kind, at)
}

func (e *Engine) removeIndexes(tx *replica.Tx, ns string, j *job.Job) {
	switch j.State {
	case job.Pending:
		if j.Keyed() {
			e.removeKeyed(tx, ns, j)
			break
		}
		k := keys.Pending(ns, j.Queue, uint8(j.Priority), j.CreatedAt, j.ID)
		dropSetOnce(tx, k)
		e.heads.removed(ns, j.Queue, k)
	case job.Scheduled:
		dropSetOnce(tx, keys.Timed(ns, keys.KindDue, j.ScheduledAt, j.ID))
	case job.Retrying:
		dropSetOnce(tx, keys.Timed(ns, keys.KindDue, j.NextAttempt, j.ID))
	case job.Active:
		dropSetOnce(tx, keys.Timed(ns, keys.KindLease, j.LeaseUntil, j.ID))
		if j.ConcurrencyKey() != "" {
			e.keyMoved(tx, ns, j, -1, 0)
		}
	}
	if stateIndexed(j.State) {
		dropSetOnce(tx, keys.StateEntry(ns, uint8(j.State), j.Queue, j.CreatedAt, j.ID))
	}
}

// The keys addIndexes writes for a job's state (pending, due, lease and
// state-index keys) are set once between deletes: only addIndexes (and
// extendLease, for the lease) sets them, for a new job (its id is new and
// no command applies twice, so no key names it yet) or after
// removeIndexes (extendLease) deleted the one before (every move changes
// the state: job's transition table has no state to itself); a restore's
// or move's chunk makes them from the job records it writes, deleting
// first (writeRestored: a chunk sent again, or a command between chunks,
// may have set one), and takes none from its stream. So they are removed
// with a SingleDelete: where it meets its one SET, in a flush or a
// compaction, both vanish, and neither the key nor a tombstone reaches
// the lower levels. A second SET before it would let the first come
// back: TestSingleDeletesMeetOneSet checks every writer over random logs.

// storeFormat is the store format these writes assume
// (replica.Registry.StoreFormat): 1, every key of a setOnce kind holds one
// version, so a node opening a store an older build wrote (which could
// set such a key twice: a restore chunk sent again) compacts it whole
// first.
const storeFormat = 1

// setOnce reports whether keys of kind (the byte after the namespace) are
// set once between deletes, as above.
func setOnce(kind byte) bool {
	switch kind {
	case keys.KindPending, keys.KindDue, keys.KindLease, keys.KindStateIndex:
		return true
	}
	return false
}

// dropSetOnce deletes k, a key of a setOnce kind.
func dropSetOnce(tx *replica.Tx, k []byte) { must(tx.SingleDelete(k, nil)) }

// addSearchEntries and dropSearchEntries keep the tag, batch and chain
// indexes: a job's tags, batch and chain step are set when it is created
// and never change, so only insert and removal touch them (a chain's
// next step gets its chain after insert: addChainStep).
func addSearchEntries(tx *replica.Tx, ns string, j *job.Job) {
	for k, v := range j.Tags {
		must(tx.Set(keys.TagEntry(ns, k, v, j.CreatedAt, j.ID), nil, nil))
	}
	if j.BatchID != "" {
		must(tx.Set(keys.BatchJob(ns, j.BatchID, j.CreatedAt, j.ID), nil, nil))
	}
	addChainStep(tx, ns, j)
}

// chainIndexed reports whether j is a step of a chain whose steps are
// indexed (job.FlowChainIndexed).
func chainIndexed(j *job.Job) bool { return j.ChainID != "" && j.Flow.Has(job.FlowChainIndexed) }

// addChainStep puts a chain step's job in its chain's index.
func addChainStep(tx *replica.Tx, ns string, j *job.Job) {
	if chainIndexed(j) {
		must(tx.Set(keys.ChainStep(ns, j.ChainID, uint16(j.ChainStep), j.ID), nil, nil))
	}
}

func dropSearchEntries(tx *replica.Tx, ns string, j *job.Job) {
	for k, v := range j.Tags {
		must(tx.Delete(keys.TagEntry(ns, k, v, j.CreatedAt, j.ID), nil))
	}
	if j.BatchID != "" {
		must(tx.Delete(keys.BatchJob(ns, j.BatchID, j.CreatedAt, j.ID), nil))
	}
	if chainIndexed(j) {
		must(tx.Delete(keys.ChainStep(ns, j.ChainID, uint16(j.ChainStep), j.ID), nil))
	}
}

// extendLease moves an active job's lease-index entry to a new expiry.
func (e *Engine) extendLease(tx *replica.Tx, ns string, j *job.Job, until int64) {
	dropSetOnce(tx, keys.Timed(ns, keys.KindLease, j.LeaseUntil, j.ID))
	j.LeaseUntil = until
	e.setTimed(tx, ns, keys.KindLease, j.LeaseUntil, j.ID)
}

// uniqueLock is the value of a unique-lock key.
type uniqueLock struct {
	JobID string `codec:"j"`
	Until int64  `codec:"u"` // 0 = until the job is terminal
}

// heldUnique returns the id of the job holding queue/key's lock at now, if any.
func heldUnique(tx *replica.Tx, ns, queue, key string, now int64) (string, bool) {
	v, closer, err := tx.Get(keys.Unique(ns, queue, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", false
	}
	must(err)
	var l uniqueLock
	derr := replica.Decode(v, &l)
	closer.Close()
	must(derr)
	if l.Until != 0 && now >= l.Until {
		return "", false
	}
	return l.JobID, true
}

func takeUnique(tx *replica.Tx, ns string, j *job.Job) {
	must(tx.Set(keys.Unique(ns, j.Queue, j.UniqueKey), replica.Encode(uniqueLock{JobID: j.ID, Until: j.UniqueUntil}), nil))
}

// releaseUnique drops j's lock when j still holds it: a job that finished
// no longer blocks a new one with the same key.
func releaseUnique(tx *replica.Tx, ns string, j *job.Job) {
	if j.UniqueKey == "" {
		return
	}
	if holder, ok := heldUnique(tx, ns, j.Queue, j.UniqueKey, 0); ok && holder == j.ID {
		must(tx.Delete(keys.Unique(ns, j.Queue, j.UniqueKey), nil))
	}
}

// registerNamespace records that ns has state here, for the leader's sweeps.
func registerNamespace(tx *replica.Tx, ns string) {
	k := keys.Registry(ns)
	if _, closer, err := tx.Get(k); err == nil {
		closer.Close()
		return
	}
	must(tx.Set(k, nil, nil))
}

// must panics on storage errors inside apply: a replica that cannot write
// its state must stop rather than diverge.
func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("shard: state write: %v", err))
	}
}
