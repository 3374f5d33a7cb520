package engine

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// A pending key is only ever meant to name a job pending under it, but a
// store can hold one that does not: keyed pending keys still come from a
// restore's or move's stream (a command between two chunks, or an edited
// stream), and older builds copied plain pending keys from it too. The
// fetch that finds such a key must not lease the job it names (its
// illegal transition would stop every member at the same entry, again at
// each restart): it deletes the key, with a plain delete since the key
// may have been set more than once, and looks again. Every member holds
// the same key and so drops it at the same entry.

// pendingAt is a pending key a fetch chose and what it knows of it.
type pendingAt struct {
	key   []byte
	queue string
	prio  uint8
	at    int64
	plain bool   // in the plain pending index, else the keyed one
	fkey  string // the keyed index's group
	ckey  string
}

// pendingJob is the job p names, taken from the cache or the store, if
// that job is pending under p; otherwise p is dropped and nil returned.
func (e *Engine) pendingJob(tx *replica.Tx, ns string, p pendingAt) *job.Job {
	id, err := keys.PendingID(p.key)
	must(err)
	j, err := e.getJob(tx, ns, id)
	if err != nil && apierr.CodeOf(err) != apierr.NotFound {
		must(err)
	}
	if j != nil && p.names(j) {
		return j
	}
	e.dropStalePending(tx, ns, p)
	return nil
}

// names reports whether p is j's pending key.
func (p pendingAt) names(j *job.Job) bool {
	if j.State != job.Pending || j.Queue != p.queue || uint8(j.Priority) != p.prio || j.CreatedAt != p.at || j.Keyed() == p.plain {
		return false
	}
	return p.plain || (j.FairnessKey() == p.fkey && j.ConcurrencyKey() == p.ckey)
}

// dropStalePending deletes p and what the engine's hints and the keyed
// index's group key say of it. The counts the stream brought with it are
// left as they are.
func (e *Engine) dropStalePending(tx *replica.Tx, ns string, p pendingAt) {
	must(tx.Delete(p.key, nil))
	if p.plain {
		e.heads.removed(ns, p.queue, p.key)
		return
	}
	g := group{p.fkey, p.ckey}
	delete(e.keyFloors, string(keys.KeyedPrefix(ns, p.queue, p.prio, g.fkey, g.ckey)))
	if e.groupHead(tx, ns, p.queue, p.prio, g) == nil {
		must(tx.Delete(keys.KeyedGroup(ns, p.queue, p.prio, g.fkey, g.ckey), nil))
	}
}

// TimedKeyLive reports whether r holds job id in the state that a key of
// the job time index kind at time at stands for: a due key for a
// scheduled or retrying job's time, a lease key for an active job's
// lease, an expire key for an unfinished job's TTL, a prune key for a
// finished job's prune time. A key an older build's restore or move left
// can name a job gone or changed; the sweeps' apply skips such a job, and
// the leader must not take it for one not yet due, which would keep its
// sweep open and propose the key again at every tick (shard/leader). A
// read error answers true: the sweep looks again.
func TimedKeyLive(r pebble.Reader, ns string, kind byte, at int64, id string) bool {
	j, err := ReadJob(r, ns, id)
	if err != nil {
		return apierr.CodeOf(err) != apierr.NotFound
	}
	switch kind {
	case keys.KindDue:
		return j.State == job.Scheduled && j.ScheduledAt == at || j.State == job.Retrying && j.NextAttempt == at
	case keys.KindLease:
		return j.State == job.Active && j.LeaseUntil == at
	case keys.KindExpire:
		return !j.State.Terminal() && j.ExpireAt == at
	case keys.KindPrune:
		return j.PruneAt == at
	}
	return true
}
