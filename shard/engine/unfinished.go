package engine

import (
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// A namespace's unfinished jobs — pending, scheduled, retrying, held
// (waiting on dependencies) and active: every job not yet completed, dead
// or cancelled — are counted in one replicated counter (keys.Unfinished),
// changed where the queue counts change (queueCache.count, dropCount), so
// a plan's max_pending_jobs is checked in O(1) at enqueue. Like the queue
// records it is kept in memory and written once per batch. A namespace
// whose counter was never written (state from before it) starts from the
// sum of its queue records' counts.

// unfinished reports whether a job in state s counts (0 = no job).
func unfinished(s job.State) bool { return s != 0 && !s.Terminal() }

// unfinishedMoved counts a job moving from state from to state to (0 =
// new, or gone) in ns's counter.
func (c *queueCache) unfinishedMoved(tx *replica.Tx, ns string, from, to job.State) {
	d := int64(0)
	if unfinished(from) {
		d--
	}
	if unfinished(to) {
		d++
	}
	if d == 0 {
		return
	}
	u := c.unfinishedRec(tx, ns)
	u.n += d
	if !u.dirty {
		u.dirty, u.since = true, tx
		c.unfDirty = append(c.unfDirty, ns)
	}
}

// unfinishedCount is a namespace's counter as the cache holds it.
type unfinishedCount struct {
	n     int64
	dirty bool        // to be written before the batch commits
	since *replica.Tx // the entry that made it dirty
}

// unfinishedOf is ns's count of unfinished jobs (FSM goroutine).
func (c *queueCache) unfinishedOf(tx *replica.Tx, ns string) int64 {
	return c.unfinishedRec(tx, ns).n
}

func (c *queueCache) unfinishedRec(tx *replica.Tx, ns string) *unfinishedCount {
	if u, ok := c.unf[ns]; ok {
		return u
	}
	var n int64
	v, closer, err := tx.Get(keys.Unfinished(ns))
	switch {
	case err == nil:
		u, _ := binary.Uvarint(v)
		n = int64(u)
		closer.Close()
	case errors.Is(err, pebble.ErrNotFound):
		n = c.sumUnfinished(tx, ns)
	default:
		must(err)
	}
	u := &unfinishedCount{n: n}
	c.unf[ns] = u
	return u
}

// sumUnfinished adds up ns's queue records' unfinished counts: the cached
// record where there is one (a change of this entry not yet written).
func (c *queueCache) sumUnfinished(tx *replica.Tx, ns string) int64 {
	p := keys.QueuePrefix(ns)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	seen := map[string]bool{}
	var n int64
	add := func(q *QueueRecord) {
		for s := range q.Counts {
			if unfinished(job.State(s)) {
				n += q.Counts[s]
			}
		}
	}
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[len(p):])
		seen[name] = true
		if q, ok := c.recs[headKey(ns, name)]; ok {
			add(q)
			continue
		}
		q := new(QueueRecord)
		must(replica.Decode(it.Value(), q))
		add(q)
	}
	must(it.Close())
	for k, q := range c.recs { // a sum: the order of the map does not matter
		if k.ns == ns && !seen[k.queue] {
			add(q)
		}
	}
	return n
}

// writeUnfinished writes the counters changed in this batch but those
// entry keep made dirty (under c.mu, from writeHeld).
func (c *queueCache) writeUnfinished(tx, keep *replica.Tx) {
	kept := c.unfDirty[:0]
	for _, ns := range c.unfDirty {
		u, ok := c.unf[ns]
		switch {
		case !ok || !u.dirty:
		case keep != nil && u.since == keep:
			kept = append(kept, ns)
		default:
			must(tx.Set(keys.Unfinished(ns), binary.AppendUvarint(nil, uint64(max(u.n, 0))), nil))
			u.dirty, u.since = false, nil
		}
	}
	c.unfDirty = kept
}

// forgetUnfinished drops ns's counter from memory (a purge deleted it).
func (c *queueCache) forgetUnfinished(ns string) { delete(c.unf, ns) }

// checkMaxPending refuses an enqueue that would take ns past its plan's
// max_pending_jobs (limit > 0): adding jobs to the unfinished ones. A job
// whose unique key an unfinished job holds creates nothing and is not
// counted; two jobs of one request with the same key both are.
func (e *Engine) checkMaxPending(tx *replica.Tx, c *EnqueueCmd) error {
	if c.MaxPending <= 0 {
		return nil
	}
	now := tx.Now.UnixNano()
	n := int64(0)
	for _, rec := range c.Jobs {
		j := new(job.Job)
		must(j.Decode(rec))
		if j.UniqueKey != "" {
			if holder, ok := heldUnique(tx, c.NS, j.Queue, j.UniqueKey, now); ok {
				if h, err := e.getJob(tx, c.NS, holder); err == nil && !h.State.Terminal() {
					continue
				}
			}
		}
		n++
	}
	if n == 0 {
		return nil
	}
	if cur := e.queues.unfinishedOf(tx, c.NS); cur+n > c.MaxPending {
		return apierr.New(apierr.QuotaExceeded,
			"max_pending_jobs is %d for this namespace: %d jobs are not finished (pending, scheduled, retrying, held or active) and this request adds %d",
			c.MaxPending, cur, n)
	}
	return nil
}

// Unfinished reads ns's count of unfinished jobs from r (any goroutine),
// for tests and views.
func Unfinished(r pebble.Reader, ns string) (int64, bool) {
	v, closer, err := r.Get(keys.Unfinished(ns))
	if err != nil {
		return 0, false
	}
	defer closer.Close()
	u, _ := binary.Uvarint(v)
	return int64(u), true
}
