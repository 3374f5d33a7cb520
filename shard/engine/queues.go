package engine

import (
	"errors"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// QueueRecord is the stored record of a queue: it exists once a job was
// enqueued to the queue or the queue was configured, and keeps live counts
// per state, the queue's settings and its recent completions. Fields are
// MessagePack with short tags; new fields are appended and optional.
type QueueRecord struct {
	Name      string         `codec:"n"`
	Counts    []int64        `codec:"c"` // indexed by job.State
	Paused    bool           `codec:"p,omitempty"`
	Draining  bool           `codec:"dr,omitempty"`
	MaxActive int64          `codec:"m,omitempty"` // 0 = unlimited
	Throttle  *Throttle      `codec:"t,omitempty"`
	Defaults  *QueueDefaults `codec:"df,omitempty"`
	Done      []int64        `codec:"tp,omitempty"` // completions per minute, Done[0] is minute DoneMin
	DoneMin   int64          `codec:"tm,omitempty"` // unix minute of Done[0]
	// Description is the user's note on the queue (QueueConfigure).
	Description string `codec:"ds,omitempty"`
	// Keyed fairness (keyed.go): KeyMax caps the active jobs of each
	// concurrency key (0 = no cap); Keyed counts the pending jobs in the
	// keyed pending index; Turns is the fairness key last served per
	// priority.
	KeyMax int64     `codec:"km,omitempty"`
	Keyed  int64     `codec:"kp,omitempty"`
	Turns  []KeyTurn `codec:"kt,omitempty"`
	// Blocked counts the pending jobs whose concurrency key is at KeyMax.
	Blocked int64 `codec:"kb,omitempty"`
	// Push makes it a push queue (push.go); nil: a pull queue.
	Push *PushConfig `codec:"pu,omitempty"`
	// Schema is the version of the queue's payload schema in force (0:
	// none; the schema itself is under keys.QueueSchema); SchemaSeq the
	// last version given (schemas.go).
	Schema    uint32 `codec:"sv,omitempty"`
	SchemaSeq uint32 `codec:"ss,omitempty"`
}

// QueueDefaults are what a job of the queue gets for the fields its
// producer did not send (0 or "" = no default: the built-in one).
type QueueDefaults struct {
	MaxRetries *int   `codec:"r,omitempty"`
	Backoff    string `codec:"b,omitempty"`
	BaseDelay  int64  `codec:"bd,omitempty"`
	MaxDelay   int64  `codec:"md,omitempty"`
	LeaseNs    int64  `codec:"l,omitempty"`
	Retention  int64  `codec:"rt,omitempty"`
	// ExpireAfter is the TTL of a job that did not say (DefExpireAfter);
	// records and commands written before it lack it: no default.
	ExpireAfter int64 `codec:"x,omitempty"`
}

// throughputMinutes is how many one-minute completion buckets a queue keeps.
const throughputMinutes = 5

func (q *QueueRecord) Count(s job.State) int64 {
	if int(s) < len(q.Counts) {
		return q.Counts[s]
	}
	return 0
}

func (q *QueueRecord) pending() int64 { return q.Count(job.Pending) }

// fetchable is how many pending jobs a fetch could take, caps aside from
// key_concurrency's.
func (q *QueueRecord) fetchable() int64 { return q.pending() - q.Blocked }

// gated reports whether anything may hold back a fetch from the queue.
func (q *QueueRecord) gated() bool { return q.Paused || q.MaxActive > 0 || q.Throttle != nil }

// canHandOut reports whether a fetch at now may take a job from the queue,
// and when refused by the throttle alone, when it may again (else 0).
func (q *QueueRecord) canHandOut(now int64) (ok bool, retryAt int64) {
	if q.Paused || (q.MaxActive > 0 && q.Count(job.Active) >= q.MaxActive) {
		return false, 0
	}
	if q.Throttle != nil {
		if room, freeAt := q.Throttle.room(now); room <= 0 {
			return false, freeAt
		}
	}
	return true, 0
}

// noteDone counts a completion in the minute of now.
func (q *QueueRecord) noteDone(now int64) {
	m := now / int64(time.Minute)
	if len(q.Done) != throughputMinutes || m-q.DoneMin >= 2*throughputMinutes {
		q.Done, q.DoneMin = make([]int64, throughputMinutes), m-throughputMinutes+1
	}
	for m >= q.DoneMin+throughputMinutes {
		q.Done = append(q.Done[1:], 0)
		q.DoneMin++
	}
	if m >= q.DoneMin {
		q.Done[m-q.DoneMin]++
	}
}

// throughput is the average number of completions per minute over the
// last throughputMinutes minutes before now, the current one included.
func (q *QueueRecord) Throughput(now int64) float64 {
	m := now / int64(time.Minute)
	var n int64
	for i, c := range q.Done {
		if at := q.DoneMin + int64(i); at > m-throughputMinutes && at <= m {
			n += c
		}
	}
	return float64(n) / throughputMinutes
}

// ThroughputSeries is the completions of each of the throughputMinutes
// minutes up to now, oldest first, the current minute last: the buckets
// Throughput averages, laid out by minute. Minutes the record has no
// bucket for (idle, or rolled out) are 0. It reads only.
func (q *QueueRecord) ThroughputSeries(now int64) []int64 {
	m := now / int64(time.Minute)
	out := make([]int64, throughputMinutes)
	for i := range out {
		if j := m - throughputMinutes + 1 + int64(i) - q.DoneMin; j >= 0 && j < int64(len(q.Done)) {
			out[i] = q.Done[j]
		}
	}
	return out
}

// clone copies q for a reader outside the FSM goroutine.
func (q *QueueRecord) clone() *QueueRecord {
	c := *q
	c.Counts = append([]int64(nil), q.Counts...)
	c.Done = append([]int64(nil), q.Done...)
	c.Turns = append([]KeyTurn(nil), q.Turns...)
	if q.Throttle != nil {
		t := *q.Throttle
		t.Slots = append([]int64(nil), q.Throttle.Slots...)
		c.Throttle = &t
	}
	if q.Defaults != nil {
		d := *q.Defaults
		c.Defaults = &d
	}
	return &c
}

func ReadQueue(r pebble.Reader, ns, queue string) (*QueueRecord, bool) {
	v, closer, err := r.Get(keys.Queue(ns, queue))
	if errors.Is(err, pebble.ErrNotFound) {
		return &QueueRecord{Name: queue}, false
	}
	must(err)
	defer closer.Close()
	q := new(QueueRecord)
	must(replica.Decode(v, q))
	return q, true
}

// queueCache keeps the queue records that applies change in memory and
// writes each changed record once per Raft batch, instead of reading and
// writing it on every transition. The FSM goroutine owns the records and
// is their only writer, so it reads them without the lock; readers on
// other goroutines (anyPending, the throttle timers) take it.
type queueCache struct {
	mu    sync.RWMutex
	recs  map[qkey]*QueueRecord
	dirty map[qkey]heldQueue // records to write

	// Each namespace's unfinished jobs (unfinished.go), FSM goroutine only.
	unf      map[string]*unfinishedCount
	unfDirty []string // namespaces whose counter changed in this batch
}

// heldQueue is a changed queue record's namespace and the entry that
// first changed it in this batch (held.go).
type heldQueue struct {
	ns    string
	since *replica.Tx
}

func newQueueCache() *queueCache {
	return &queueCache{recs: map[qkey]*QueueRecord{}, dirty: map[qkey]heldQueue{},
		unf: map[string]*unfinishedCount{}}
}

// get returns queue's record, loading it into the cache (FSM goroutine).
func (c *queueCache) get(tx *replica.Tx, ns, queue string) *QueueRecord {
	k := headKey(ns, queue)
	if q, ok := c.recs[k]; ok {
		return q
	}
	q, _ := ReadQueue(tx, ns, queue)
	c.mu.Lock()
	c.recs[k] = q
	c.mu.Unlock()
	return q
}

// exists reports whether queue has a stored or cached record (FSM goroutine).
func (c *queueCache) exists(tx *replica.Tx, ns, queue string) bool {
	if q, ok := c.recs[headKey(ns, queue)]; ok {
		return len(q.Counts) > 0 || q.gated() || q.Defaults != nil
	}
	_, ok := ReadQueue(tx, ns, queue)
	return ok
}

// update changes queue's record under the lock and marks it for writing.
func (c *queueCache) update(tx *replica.Tx, ns, queue string, f func(q *QueueRecord)) {
	q := c.get(tx, ns, queue)
	c.mu.Lock()
	f(q)
	for len(q.Counts) <= int(job.Cancelled) {
		q.Counts = append(q.Counts, 0)
	}
	c.mu.Unlock()
	c.touch(tx, ns, queue)
}

// touch marks queue's record for writing before the batch commits. The
// change lives only in memory until then, so the command is marked dirty:
// if it is refused, the replica undoes it (replica.Tx.MarkDirty).
func (c *queueCache) touch(tx *replica.Tx, ns, queue string) {
	tx.MarkDirty()
	if len(c.dirty) == 0 {
		tx.BeforeCommit(func() { c.flush(tx) })
	}
	if k := headKey(ns, queue); c.dirty[k].since == nil {
		c.dirty[k] = heldQueue{ns, tx}
	}
}

// count moves one job of queue from state "from" (0 = new) to "to"
// (0 = gone).
func (c *queueCache) count(tx *replica.Tx, ns, queue string, from, to job.State) {
	c.unfinishedMoved(tx, ns, from, to)
	c.update(tx, ns, queue, func(q *QueueRecord) {
		for len(q.Counts) <= int(max(from, to, job.Cancelled)) { // held (8) only once used
			q.Counts = append(q.Counts, 0)
		}
		if from != 0 {
			q.Counts[from]--
		}
		if to != 0 {
			q.Counts[to]++
		}
		if to == job.Completed {
			q.noteDone(tx.Now.UnixNano())
		}
	})
}

// drop forgets queue's record and deletes it from the state.
func (c *queueCache) drop(tx *replica.Tx, ns, queue string) {
	k := headKey(ns, queue)
	c.mu.Lock()
	delete(c.recs, k)
	c.mu.Unlock()
	delete(c.dirty, k)
	must(tx.Delete(keys.Queue(ns, queue), nil))
}

// flush writes every record and counter changed in this batch.
func (c *queueCache) flush(tx *replica.Tx) { c.writeHeld(tx, nil) }

// writeHeld writes the records and counters changed in this batch, but
// those entry keep changed first, which stay held (held.go).
func (c *queueCache) writeHeld(tx, keep *replica.Tx) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, h := range c.dirty { // distinct keys: the order writes nothing different
		if keep != nil && h.since == keep {
			continue
		}
		if q, ok := c.recs[k]; ok {
			must(tx.Set(keys.Queue(h.ns, q.Name), replica.Encode(q), nil))
		}
		delete(c.dirty, k)
	}
	c.writeUnfinished(tx, keep)
}

// ready reports, from the last applied state, whether queue holds a
// pending job that a fetch at now may take; when only the throttle holds
// it back, retryAt is when it may again.
func (c *queueCache) ready(r pebble.Reader, ns, queue string, now int64) (ok bool, retryAt int64) {
	c.mu.RLock()
	q, cached := c.recs[headKey(ns, queue)]
	if cached {
		ok = q.fetchable() > 0
		if ok && q.gated() {
			ok, retryAt = q.canHandOut(now)
		}
	}
	c.mu.RUnlock()
	if cached {
		return ok, retryAt
	}
	q, _ = ReadQueue(r, ns, queue)
	if q.fetchable() <= 0 {
		return false, 0
	}
	return q.canHandOut(now)
}

// read returns a copy of queue's record as last applied, and whether the
// queue exists.
func (c *queueCache) read(r pebble.Reader, ns, queue string) (*QueueRecord, bool) {
	c.mu.RLock()
	q, ok := c.recs[headKey(ns, queue)]
	if ok {
		q = q.clone()
	}
	c.mu.RUnlock()
	if ok {
		return q, len(q.Counts) > 0 || q.gated() || q.Defaults != nil
	}
	return ReadQueue(r, ns, queue)
}

// reset drops everything cached (Engine.reset).
func (c *queueCache) reset() {
	c.mu.Lock()
	c.recs = map[qkey]*QueueRecord{}
	c.dirty = map[qkey]heldQueue{}
	c.unf = map[string]*unfinishedCount{}
	c.unfDirty = nil
	c.mu.Unlock()
}

// queueRetention is the retention of queue's finished jobs, or 0 when the
// queue sets none. It peeks at the cached record under the lock rather
// than loading or copying it: the retention observer runs on every finish.
func (e *Engine) queueRetention(r pebble.Reader, ns, queue string) time.Duration {
	c := e.queues
	c.mu.RLock()
	q, ok := c.recs[headKey(ns, queue)]
	var d time.Duration
	if ok && q.Defaults != nil {
		d = time.Duration(q.Defaults.Retention)
	}
	c.mu.RUnlock()
	if ok {
		return d
	}
	if q, _ = ReadQueue(r, ns, queue); q.Defaults != nil {
		d = time.Duration(q.Defaults.Retention)
	}
	return d
}

// dropCount takes one job in state s out of queue's counts (the job moved
// away or was deleted).
func (c *queueCache) dropCount(tx *replica.Tx, ns, queue string, s job.State) {
	c.count(tx, ns, queue, s, s) // loads the record and schedules its write
	c.unfinishedMoved(tx, ns, s, 0)
	c.mu.Lock()
	c.recs[headKey(ns, queue)].Counts[s]--
	c.mu.Unlock()
}
