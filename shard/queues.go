package shard

import (
	"errors"
	"sync"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// queueRecord is the stored record of a queue: it exists once a job was
// enqueued to the queue and keeps live counts per state.
type queueRecord struct {
	Name   string  `codec:"n"`
	Counts []int64 `codec:"c"` // indexed by job.State
}

func (q *queueRecord) pending() int64 {
	if int(job.Pending) < len(q.Counts) {
		return q.Counts[job.Pending]
	}
	return 0
}

func getQueue(r pebble.Reader, ns, queue string) (*queueRecord, bool) {
	v, closer, err := r.Get(keys.Queue(ns, queue))
	if errors.Is(err, pebble.ErrNotFound) {
		return &queueRecord{Name: queue}, false
	}
	must(err)
	defer closer.Close()
	q := new(queueRecord)
	must(decode(v, q))
	return q, true
}

// queueCache keeps the queue records that applies change in memory and
// writes each changed record once per Raft batch, instead of reading and
// writing it on every transition. The FSM goroutine owns the records;
// readers (anyPending) take the lock.
type queueCache struct {
	mu    sync.RWMutex
	recs  map[string]*queueRecord
	dirty map[string]string // cache key → namespace, of records to write
}

func newQueueCache() *queueCache {
	return &queueCache{recs: map[string]*queueRecord{}, dirty: map[string]string{}}
}

// count moves one job of queue from state "from" (0 = new) to "to".
func (c *queueCache) count(tx *replica.Tx, ns, queue string, from, to job.State) {
	k := headKey(ns, queue)
	c.mu.Lock()
	defer c.mu.Unlock()
	q, ok := c.recs[k]
	if !ok {
		q, _ = getQueue(tx, ns, queue)
		c.recs[k] = q
	}
	for len(q.Counts) <= int(job.Cancelled) {
		q.Counts = append(q.Counts, 0)
	}
	if from != 0 {
		q.Counts[from]--
	}
	q.Counts[to]++
	if len(c.dirty) == 0 {
		tx.BeforeCommit(func() { c.flush(tx) })
	}
	c.dirty[k] = ns
}

func (c *queueCache) flush(tx *replica.Tx) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, ns := range c.dirty {
		q := c.recs[k]
		must(tx.Set(keys.Queue(ns, q.Name), encode(q), nil))
		delete(c.dirty, k)
	}
}

// pending reports the pending count of queue as last applied.
func (c *queueCache) pending(r pebble.Reader, ns, queue string) int64 {
	c.mu.RLock()
	q, ok := c.recs[headKey(ns, queue)]
	var n int64
	if ok {
		n = q.pending()
	}
	c.mu.RUnlock()
	if ok {
		return n
	}
	q, _ = getQueue(r, ns, queue)
	return q.pending()
}

// reset drops everything cached: after a snapshot restore.
func (c *queueCache) reset() {
	c.mu.Lock()
	c.recs = map[string]*queueRecord{}
	c.dirty = map[string]string{}
	c.mu.Unlock()
}
