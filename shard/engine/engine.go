package engine

import (
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// DefaultRetention is how long completed and cancelled jobs are kept when
// neither the queue, the namespace nor Options say otherwise.
const DefaultRetention = 7 * 24 * time.Hour

// Waker is told, after a commit, of queues whose parked fetches may now
// get a job. The engine never waits on it.
type Waker interface {
	// Wake wakes up to n fetches parked on queue.
	Wake(ns, queue string, n int)
	// WakeAt wakes fetches parked on a throttled queue at (unix ns), when
	// its window frees room; room says how many may fetch then.
	WakeAt(ns, queue string, at int64, room func(now int64) int)
}

// Observer is told, inside the apply, of every job that entered a state:
// from is 0 for a new job, and j.State is the new state. It must be
// deterministic and must not change j; effects outside the state belong
// after the commit (tx.AfterCommit). Node-local views (events, workers,
// metrics) observe through it.
type Observer func(tx *replica.Tx, ns string, j *job.Job, from job.State)

// CancelObserver is told, inside the apply, of an active job just marked
// cancelling (its state does not change, so Observers are not told): its
// worker is to stop it. Like an Observer it must be deterministic and
// act after the commit.
type CancelObserver func(tx *replica.Tx, ns string, j *job.Job)

// Options configure an Engine. Zero values take the defaults in comments.
type Options struct {
	// Retention of completed and cancelled jobs whose queue and
	// namespace set none; default DefaultRetention. Applies read it: one value per cluster.
	Retention time.Duration
	// Waker wakes parked fetches; default none (a state machine without
	// long-polls, as in tests).
	Waker Waker
	// Observers see every state change, in order (see Engine.observe).
	Observers []Observer
	// Cancelling are told of every active job marked cancelling.
	Cancelling []CancelObserver
}

// Engine is the shard's state machine: the handlers of every command
// (Registry) and the in-memory caches they keep of the state. It reads
// no clock and starts no goroutine; everything it does happens inside an
// apply on Raft's FSM goroutine, except the few reads the methods below
// document as safe from other goroutines.
type Engine struct {
	retention time.Duration
	waker     Waker
	external  []Observer
	cancels   []CancelObserver

	heads     pendingHeads // FSM goroutine only
	keyFloors keyFloors    // FSM goroutine only: keyed groups' heads (keyed.go)
	queues    *queueCache  // queue records, written once per batch
	jobs      *jobCache    // FSM goroutine only: recent job records
	floors    *timeFloors  // written by applies, taken by the leader's sweep

	nsConfigs map[string]NamespaceConfig // FSM goroutine only: namespace settings read or written
	budgets   map[string][]*BudgetRecord // FSM goroutine only: namespaces' AI budgets read (budgets.go)
	usage     *usageCache                // usage meters and gauges, written once per batch (usage.go)
	history   *historyCache              // queue history buckets, written once per batch (history.go)
	events    *eventLog                  // the event log's switch and the entry's next position (eventlog.go)
	marks     *restoreMarks              // restore markers as committed, read by the API on every request (restoremarks.go)
	movesFSM  *moveSet                   // move fences and tombstones as applied, for the gate of each command (movemarks.go)
	movesAPI  *moveSet                   // the same as committed, read by the API on every request
	encEpoch  atomic.Uint64              // commits that may have changed an encryption record (encryption.go)
	encBusy   atomic.Int64               // such commits begun and not yet counted in encEpoch

	restoreRefuse restoreGate // the apply's view of RestoreStartRefusing (restoregate.go)

	purgeStep int // keys one namespace purge step deletes (purgeStepKeys; tests lower it)

	idemMax int64             // records a namespace keeps (wire.MaxIdempotencyRecords; tests lower it)
	idemTTL time.Duration     // how long a record is kept (wire.IdempotencyTTL; tests shorten it)
	reg     *replica.Registry // the handlers, for the command an idempotent one wraps (idempotency.go)
}

// New returns an engine; Registry gives the handlers a replica runs.
func New(o Options) *Engine {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Waker == nil {
		o.Waker = noWaker{}
	}
	return &Engine{
		retention: o.Retention, waker: o.Waker, external: o.Observers, cancels: o.Cancelling,
		heads: pendingHeads{}, keyFloors: keyFloors{}, queues: newQueueCache(), jobs: newJobCache(jobCacheSize),
		floors: &timeFloors{m: map[floorKey]int64{}}, purgeStep: purgeStepKeys,
		nsConfigs: map[string]NamespaceConfig{}, budgets: map[string][]*BudgetRecord{}, usage: newUsageCache(), history: newHistoryCache(), events: &eventLog{counts: map[string]*eventCount{}}, marks: &restoreMarks{},
		movesFSM: &moveSet{}, movesAPI: &moveSet{}, idemMax: wire.MaxIdempotencyRecords, idemTTL: wire.IdempotencyTTL,
	}
}

// Registry returns a registry with every command's handler, and the reset
// that drops the caches when the state changes under them.
func (e *Engine) Registry() *replica.Registry {
	r := new(replica.Registry)
	r.StoreFormat(storeFormat)
	r.OnReset(e.reset)
	e.reg = r
	e.register(r)
	return r
}

// reset drops everything cached: after a snapshot restore, or before a
// group applies again without a refused command. The time floors stay:
// they are only lower bounds, and a sweep after a restore starts from the
// bottom anyway.
func (e *Engine) reset() {
	e.heads = pendingHeads{}
	e.keyFloors = keyFloors{}
	e.queues.reset()
	e.jobs.reset()
	e.nsConfigs = map[string]NamespaceConfig{}
	e.budgets = map[string][]*BudgetRecord{}
	e.usage.reset()
	e.history.reset()
	e.events.reset()
	e.marks.reset()
	e.restoreRefuse = restoreGate{}
	e.movesFSM.reset()
	e.movesAPI.reset()
	e.encEpoch.Add(1) // a snapshot may have replaced encryption records
}

// TakeFloor returns the lowest time inserted into ns's time index kind
// since the last take (math.MaxInt64 if none) and starts a new round: the
// sweep starts there instead of at the index's tombstoned bottom.
func (e *Engine) TakeFloor(ns string, kind byte) int64 { return e.floors.take(ns, kind) }

// LowerFloor makes the next TakeFloor of ns's index kind return at most at:
// a sweep that did not finish looks there again.
func (e *Engine) LowerFloor(ns string, kind byte, at int64) { e.floors.inserted(ns, kind, at) }

// QueueReady reads the last applied state (safe from any goroutine): may
// queue hand out a pending job at now? When only its throttle holds it
// back, retryAt is when it may again.
func (e *Engine) QueueReady(r pebble.Reader, ns, queue string, now int64) (ok bool, retryAt int64) {
	return e.queues.ready(r, ns, queue, now)
}

// Queue returns a copy of queue's record as last applied, and whether the
// queue exists (safe from any goroutine).
func (e *Engine) Queue(r pebble.Reader, ns, queue string) (*QueueRecord, bool) {
	return e.queues.read(r, ns, queue)
}

// Queues calls f with every cached queue record (safe from any goroutine;
// f must not keep the record), for metrics.
func (e *Engine) Queues(f func(ns string, q *QueueRecord)) {
	e.queues.mu.RLock()
	defer e.queues.mu.RUnlock()
	for k, q := range e.queues.recs {
		f(k.ns, q)
	}
}

// RoomAt is how many fetches of a throttled queue may run at now, at
// least 1 (safe from any goroutine).
func (e *Engine) RoomAt(ns, queue string, now int64) int {
	e.queues.mu.RLock()
	defer e.queues.mu.RUnlock()
	q, ok := e.queues.recs[headKey(ns, queue)]
	if !ok || q.Throttle == nil {
		return 1
	}
	room, _ := q.Throttle.room(now)
	if p := q.pending(); room > p {
		room = p
	}
	return int(max(room, 1))
}

// roomOf binds RoomAt to one queue, for Waker.WakeAt.
func (e *Engine) roomOf(ns, queue string) func(now int64) int {
	return func(now int64) int { return e.RoomAt(ns, queue, now) }
}

// wake tells long-polls on queue, after commit, that n jobs are pending.
func (e *Engine) wake(tx *replica.Tx, ns, queue string, n int) {
	tx.AfterCommit(func() { e.waker.Wake(ns, queue, n) })
}

// Namespaces lists the namespaces with state in r.
func Namespaces(r pebble.Reader) []string {
	p := keys.RegistryPrefix()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, keys.RegistryNamespace(it.Key()))
	}
	return out
}

type noWaker struct{}

func (noWaker) Wake(string, string, int)                          {}
func (noWaker) WakeAt(string, string, int64, func(now int64) int) {}
