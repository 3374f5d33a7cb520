package shard

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// fetchCmd leases the next job of the given queues to a worker.
type fetchCmd struct {
	NS       string   `codec:"ns"`
	Queues   []string `codec:"q"`
	WorkerID string   `codec:"w"`
	Hostname string   `codec:"h"`
	LeaseNs  int64    `codec:"l"`
	// LeaseDefault is set when the worker sent no lease_duration: the
	// queue's default lease, if it has one, replaces LeaseNs.
	LeaseDefault bool `codec:"ld,omitempty"`
}

func (e *Engine) registerFetch(r *replica.Registry) {
	r.Register(cmdFetch, "fetch", typed(e.applyFetch))
}

// applyFetch pops the best pending job across the queues that may hand
// out a job now (not paused, under their concurrency limit and throttle):
// lowest priority value first, then oldest. Jobs found past their TTL are
// moved to dead on the way. Returns *job.Job or nil when nothing is
// pending.
func (e *Engine) applyFetch(tx *replica.Tx, c *fetchCmd) any {
	now := tx.Now.UnixNano()
	for {
		var best []byte
		var bestQ *queueRecord
		var bestPrio uint8
		var bestAt int64
		for _, q := range c.Queues {
			k := e.heads.first(tx, c.NS, q)
			if k == nil {
				continue
			}
			rec := e.queues.get(tx, c.NS, q)
			if rec.gated() {
				if ok, retryAt := rec.canHandOut(now); !ok {
					if retryAt > 0 {
						ns, q := c.NS, q
						tx.AfterCommit(func() { e.wakeAt(ns, q, retryAt) })
					}
					continue
				}
			}
			p, at, err := keys.PendingOrder(c.NS, q, k)
			must(err)
			if best == nil || p < bestPrio || (p == bestPrio && at < bestAt) {
				best, bestQ, bestPrio, bestAt = k, rec, p, at
			}
		}
		if best == nil {
			return (*job.Job)(nil)
		}
		id, err := keys.PendingID(best)
		must(err)
		j, err := e.getJob(tx, c.NS, id)
		must(err)
		if j.Expired(now) {
			j.DeadReason = job.ReasonExpired
			e.moveTo(tx, c.NS, j, job.Dead)
			e.putJob(tx, c.NS, j)
			continue
		}
		if bestQ.Throttle != nil {
			e.queues.update(tx, c.NS, j.Queue, func(q *queueRecord) { q.Throttle.take(now) })
		}
		lease := c.LeaseNs
		if c.LeaseDefault && bestQ.Defaults != nil && bestQ.Defaults.LeaseNs > 0 {
			lease = bestQ.Defaults.LeaseNs
		}
		j.Attempt++
		j.StartedAt = now
		j.WorkerID, j.Hostname = c.WorkerID, c.Hostname
		j.LeaseNs = lease
		j.LeaseUntil = now + lease
		e.moveTo(tx, c.NS, j, job.Active)
		e.putJob(tx, c.NS, j)
		return j
	}
}
