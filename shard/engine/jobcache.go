package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// jobCache keeps the job records the FSM wrote or read recently, decoded.
// A job's transitions follow each other closely (enqueue, fetch, ack), and
// reading and decoding the record again from Pebble was a quarter of the
// apply time. It belongs to the FSM goroutine: reads of the HTTP API go to
// Pebble. A read takes the record out of the cache and a write puts a copy
// in (a new job's write puts the job itself: own), so a handler that
// changes a job and then fails (leaving no writes) cannot leave the cache
// ahead of Pebble, and a job a command returns is never shared with a
// later command. Two generations bound its size: when the newer fills,
// the older is dropped.
type jobCache struct {
	cur, old map[string]cachedJob // by job id: ids are unique on a shard
	max      int
	key, val []byte // putJob's buffers
}

// cachedJob is a record and its namespace, which a read must name too: a
// job id from another namespace is a miss, never that namespace's job.
type cachedJob struct {
	ns string
	j  *job.Job
}

// jobCacheSize is the number of records per generation: a few seconds of
// lifecycle traffic at full speed, about 10 MiB of small jobs.
const jobCacheSize = 1 << 15

func newJobCache(max int) *jobCache {
	return &jobCache{cur: make(map[string]cachedJob, max), old: map[string]cachedJob{}, max: max}
}

// take removes and returns the cached record of a job.
func (c *jobCache) take(ns, id string) (*job.Job, bool) {
	if e, ok := c.cur[id]; ok && e.ns == ns {
		delete(c.cur, id)
		return e.j, true
	}
	if e, ok := c.old[id]; ok && e.ns == ns {
		delete(c.old, id)
		return e.j, true
	}
	return nil, false
}

// put caches a copy of j, which the caller keeps. A job that reached a
// final state is not kept: nothing in its lifecycle reads it soon.
func (c *jobCache) put(ns string, j *job.Job) { c.keep(ns, j, true) }

// own caches j itself, which the caller gives up: it changes j after this
// only to write it again (putJob), and never hands it out of the apply.
// A new job is the one case (insertJob): its record is made and written
// inside the command, and a copy there was one of the two per lifecycle.
func (c *jobCache) own(ns string, j *job.Job) { c.keep(ns, j, false) }

func (c *jobCache) keep(ns string, j *job.Job, copied bool) {
	if j.State.Terminal() {
		c.drop(j.ID)
		return
	}
	if len(c.cur) >= c.max {
		c.old, c.cur = c.cur, make(map[string]cachedJob, c.max)
	}
	if copied {
		j = j.Clone()
	}
	c.cur[j.ID] = cachedJob{ns, j}
}

func (c *jobCache) drop(id string) {
	delete(c.cur, id)
	delete(c.old, id)
}

// dropNamespace forgets every cached job of ns.
func (c *jobCache) dropNamespace(ns string) {
	for _, m := range []map[string]cachedJob{c.cur, c.old} {
		for id, e := range m {
			if e.ns == ns {
				delete(m, id)
			}
		}
	}
}

func (c *jobCache) reset() {
	c.cur, c.old = make(map[string]cachedJob, c.max), map[string]cachedJob{}
}

// getJob loads a job for a command: from the cache, else from the entry's
// batch (which sees earlier writes of the batch) and the store.
func (e *Engine) getJob(tx *replica.Tx, ns, id string) (*job.Job, error) {
	if j, ok := e.jobs.take(ns, id); ok {
		return j, nil
	}
	return ReadJob(tx, ns, id)
}

// putJob writes j's record into the entry's batch. The batch copies key
// and value, so both are built in buffers the cache reuses. On a shard
// that meters usage the record carries its size (job.Job.Stored), and
// its namespace's stored bytes change by the difference.
func (e *Engine) putJob(tx *replica.Tx, ns string, j *job.Job) {
	e.writeJob(tx, ns, j)
	e.jobs.put(ns, j)
}

// putNewJob is putJob for a job insertJob just made: the cache takes j
// itself (jobCache.own).
func (e *Engine) putNewJob(tx *replica.Tx, ns string, j *job.Job) {
	e.writeJob(tx, ns, j)
	e.jobs.own(ns, j)
}

// writeJob is putJob's write, without the cache.
func (e *Engine) writeJob(tx *replica.Tx, ns string, j *job.Job) {
	j.UpdatedAt = tx.Now.UnixNano()
	c := e.jobs
	c.key = keys.AppendJob(c.key[:0], ns, j.ID)
	if e.usage.metering(tx) {
		var delta int64
		c.val, delta = j.AppendMetered(c.val[:0], len(c.key))
		e.storedDelta(tx, ns, delta)
	} else {
		c.val = j.AppendEncoded(c.val[:0])
	}
	must(tx.Set(c.key, c.val, nil))
}

// deleteJobRecord removes j's record (its indexes are the caller's), and
// the bytes it counted from its namespace's stored bytes.
func (e *Engine) deleteJobRecord(tx *replica.Tx, ns string, j *job.Job) {
	must(tx.Delete(keys.Job(ns, j.ID), nil))
	must(tx.Delete(keys.JobAI(ns, j.ID), nil)) // its usage, if it has any (aiusage.go)
	e.jobs.drop(j.ID)
	e.storedDelta(tx, ns, -j.Stored)
}
