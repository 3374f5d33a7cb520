package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// FetchCmd leases the next job of the given queues to a worker.
type FetchCmd struct {
	NS       string   `codec:"ns"`
	Queues   []string `codec:"q"`
	WorkerID string   `codec:"w"`
	Hostname string   `codec:"h"`
	LeaseNs  int64    `codec:"l"`
	// LeaseDefault is set when the worker sent no lease_duration: the
	// job's own lease, else its queue's default, if set, replaces LeaseNs.
	LeaseDefault bool `codec:"ld,omitempty"`
	// Named is set by fetches that hand out lease tokens: the lease is
	// stamped after the job's last (job.LeaseAfter), so its job.LeaseID
	// is new. Entries from before tokens lack it and lease as they did.
	Named bool `codec:"nm,omitempty"`
}

// applyFetch pops the best pending job across the queues that may hand
// out a job now (not paused, under their concurrency limit and throttle):
// lowest priority value first, then oldest; within a keyed queue, its
// fairness keys' turn (keyed.go). Jobs found past their TTL are
// moved to dead on the way. Returns nil when nothing may be handed out.
func (e *Engine) applyFetch(tx *replica.Tx, c *FetchCmd) (*job.Job, error) {
	return e.fetchOne(tx, c, &fetchHolds{}), nil
}

// fetchOne is one fetch of a command; holds is the command's look at the
// namespace's AI budgets, shared by a batch's fetches.
func (e *Engine) fetchOne(tx *replica.Tx, c *FetchCmd, holds *fetchHolds) *job.Job {
	now := tx.Now.UnixNano()
	for {
		var best pendingAt // its key nil: none yet
		var bestQ *QueueRecord
		for _, q := range c.Queues {
			rec := e.queues.get(tx, c.NS, q)
			var k []byte
			if rec.Keyed == 0 {
				// No keyed job pending: the head of the pending index.
				if k = e.heads.first(tx, c.NS, q); k == nil {
					continue
				}
			}
			if rec.gated() {
				if ok, retryAt := rec.canHandOut(now); !ok {
					if retryAt > 0 {
						ns, q := c.NS, q
						tx.AfterCommit(func() { e.waker.WakeAt(ns, q, retryAt, e.roomOf(ns, q)) })
					}
					continue
				}
			}
			cand := pendingAt{key: k, queue: q, plain: true}
			if rec.Keyed == 0 {
				var err error
				cand.prio, cand.at, err = keys.PendingOrder(c.NS, q, k)
				must(err)
			} else {
				kc, ok := e.pickKeyed(tx, c.NS, q, rec)
				if !ok {
					continue
				}
				cand = pendingAt{key: kc.key, queue: q, prio: kc.prio, at: kc.at, plain: kc.plain, fkey: kc.fkey, ckey: kc.ckey}
			}
			if best.key == nil || cand.prio < best.prio || (cand.prio == best.prio && cand.at < best.at) {
				best, bestQ = cand, rec
			}
		}
		if best.key == nil {
			return nil
		}
		j := e.pendingJob(tx, c.NS, best)
		if j == nil {
			continue // a stale key, dropped (stalekeys.go)
		}
		if j.Expired(now) {
			e.kill(tx, c.NS, j, job.ReasonExpired)
			e.putJob(tx, c.NS, j)
			continue
		}
		if hold, reject := e.fetchBudget(tx, c.NS, j, holds); reject != "" {
			e.kill(tx, c.NS, j, job.ReasonBudgetExceeded) // past an AI budget's per-job limit
			e.putJob(tx, c.NS, j)
			continue
		} else if hold != "" {
			e.moveTo(tx, c.NS, j, job.Held) // an AI budget reached: it waits for approval
			e.putJob(tx, c.NS, j)
			e.holdForBudget(tx, c.NS, j, hold)
			continue
		}
		if bestQ.Keyed > 0 || len(bestQ.Turns) > 0 {
			e.queues.update(tx, c.NS, j.Queue, func(q *QueueRecord) { q.served(best.prio, best.fkey) })
		}
		if bestQ.Throttle != nil {
			e.queues.update(tx, c.NS, j.Queue, func(q *QueueRecord) { q.Throttle.take(now) })
		}
		// A worker's lease_duration wins; else the job's own, else its queue's.
		lease := c.LeaseNs
		switch {
		case !c.LeaseDefault:
		case j.OwnLeaseNs > 0:
			lease = j.OwnLeaseNs
		case bestQ.Defaults != nil && bestQ.Defaults.LeaseNs > 0:
			lease = bestQ.Defaults.LeaseNs
		}
		if c.Named {
			job.LeaseAfter(j, c.WorkerID, c.Hostname, now, lease)
		} else {
			job.Lease(j, c.WorkerID, c.Hostname, now, lease)
		}
		e.moveTo(tx, c.NS, j, job.Active)
		e.putJob(tx, c.NS, j)
		return j
	}
}
