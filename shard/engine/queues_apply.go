package engine

import (
	"bytes"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// QueueCmd names one queue: pause, resume and drain.
type QueueCmd struct {
	NS    string `codec:"ns"`
	Queue string `codec:"q"`
}

// QueueLimitCmd sets (Max > 0) or removes (0) a concurrency limit.
type QueueLimitCmd struct {
	NS    string `codec:"ns"`
	Queue string `codec:"q"`
	Max   int64  `codec:"m"`
}

// QueueThrottleCmd sets (Rate > 0) or removes (0) a throttle.
type QueueThrottleCmd struct {
	NS     string `codec:"ns"`
	Queue  string `codec:"q"`
	Rate   int64  `codec:"r"`
	Period int64  `codec:"p"`
}

// QueueDefaultsCmd replaces the queue's job defaults.
type QueueDefaultsCmd struct {
	NS       string        `codec:"ns"`
	Queue    string        `codec:"q"`
	Defaults QueueDefaults `codec:"d"`
}

// QueueConfigCmd sets a queue's whole configuration at once (PUT
// /api/v1/queues/{name}): what it leaves zero is reset.
type QueueConfigCmd struct {
	NS          string        `codec:"ns"`
	Queue       string        `codec:"q"`
	Description string        `codec:"ds,omitempty"`
	Paused      bool          `codec:"p,omitempty"`
	Max         int64         `codec:"m,omitempty"`  // 0 = no concurrency limit
	Rate        int64         `codec:"r,omitempty"`  // 0 = no throttle
	Period      int64         `codec:"pe,omitempty"` // ns
	Defaults    QueueDefaults `codec:"d"`
	// KeyMax caps the active jobs of each concurrency key (0 = no cap);
	// absent in older entries, which knew no such cap.
	KeyMax int64 `codec:"km,omitempty"`
	// Push makes it a push queue; proposed under QueueConfigurePush
	// (QueueConfigureFor), which a node that knows no push refuses.
	Push *PushConfig `codec:"pu,omitempty"`
	// Schema is the queue's payload schema (canonical JSON, checked by
	// the proposer), nil for none; proposed under QueueConfigureSchema
	// (QueueConfigureFor). A command without it removes the schema,
	// unless KeepSchema says to keep the one in force.
	Schema     []byte `codec:"sc,omitempty"`
	KeepSchema bool   `codec:"ks,omitempty"`
}

// QueueSweepCmd is one step of clearing or deleting a queue: the handler
// removes what it finds from After on, up to a bound, and says where the
// next step starts. Each step is one Raft entry of bounded size.
type QueueSweepCmd struct {
	NS    string `codec:"ns"`
	Queue string `codec:"q"`
	Phase uint8  `codec:"ph,omitempty"`
	After []byte `codec:"a,omitempty"` // first key to look at; nil = from the start
}

// QueueStep is the result of a clear or delete step.
type QueueStep struct {
	Removed int
	Phase   uint8
	Next    []byte // where the next step starts; nil when done
}

// Bounds of one clear or delete step.
const (
	queueStepRemove = 1000  // jobs removed
	queueStepScan   = 10000 // index entries or records looked at
)

func queueNotFound(queue string) error {
	return apierr.New(apierr.NotFound, "queue %q not found", queue)
}

// applyQueuePause stops fetches from the queue (creating it if new).
func (e *Engine) applyQueuePause(tx *replica.Tx, c *QueueCmd) (replica.None, error) {
	registerNamespace(tx, c.NS)
	paused := false
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) { paused, q.Paused = !q.Paused, true })
	e.queuePaused(tx, c.NS, c.Queue, paused)
	return replica.None{}, nil
}

// applyQueueResume lets fetches in again and wakes parked workers.
func (e *Engine) applyQueueResume(tx *replica.Tx, c *QueueCmd) (replica.None, error) {
	if !e.queues.exists(tx, c.NS, c.Queue) {
		return replica.None{}, queueNotFound(c.Queue)
	}
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) { q.Paused, q.Draining = false, false })
	e.wakeQueue(tx, c.NS, c.Queue)
	return replica.None{}, nil
}

// applyQueueDrain pauses the queue and returns its active count; the queue
// reads as drained once that reaches zero.
func (e *Engine) applyQueueDrain(tx *replica.Tx, c *QueueCmd) (int64, error) {
	if !e.queues.exists(tx, c.NS, c.Queue) {
		return 0, queueNotFound(c.Queue)
	}
	var active int64
	paused := false
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) {
		paused = !q.Paused
		q.Paused, q.Draining = true, true
		active = q.Count(job.Active)
	})
	e.queuePaused(tx, c.NS, c.Queue, paused)
	return active, nil
}

// applyQueueConcurrency sets or removes the queue's limit of active jobs.
func (e *Engine) applyQueueConcurrency(tx *replica.Tx, c *QueueLimitCmd) (replica.None, error) {
	if c.Max == 0 && !e.queues.exists(tx, c.NS, c.Queue) {
		return replica.None{}, queueNotFound(c.Queue)
	}
	registerNamespace(tx, c.NS)
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) { q.MaxActive = c.Max })
	e.wakeQueue(tx, c.NS, c.Queue)
	return replica.None{}, nil
}

// applyQueueThrottle sets (starting an empty window) or removes the
// queue's throttle.
func (e *Engine) applyQueueThrottle(tx *replica.Tx, c *QueueThrottleCmd) (replica.None, error) {
	if c.Rate == 0 && !e.queues.exists(tx, c.NS, c.Queue) {
		return replica.None{}, queueNotFound(c.Queue)
	}
	registerNamespace(tx, c.NS)
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) {
		q.Throttle = nil
		if c.Rate > 0 {
			q.Throttle = newThrottle(c.Rate, c.Period)
		}
	})
	e.wakeQueue(tx, c.NS, c.Queue)
	return replica.None{}, nil
}

// applyQueueDefaults replaces the defaults new jobs of the queue take.
func (e *Engine) applyQueueDefaults(tx *replica.Tx, c *QueueDefaultsCmd) (replica.None, error) {
	registerNamespace(tx, c.NS)
	d := c.Defaults
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) {
		q.Defaults = nil
		if d != (QueueDefaults{}) {
			q.Defaults = &d
		}
	})
	return replica.None{}, nil
}

// applyQueueConfigure creates the queue or replaces its configuration.
// The same configuration again changes nothing: a throttle of the same
// period keeps its window (a new rate applies to the fetches it counted),
// and pausing a draining queue leaves it draining; unpausing ends a drain,
// as resume does.
func (e *Engine) applyQueueConfigure(tx *replica.Tx, c *QueueConfigCmd) (replica.None, error) {
	registerNamespace(tx, c.NS)
	if !c.KeepSchema {
		e.setSchema(tx, c.NS, c.Queue, c.Schema)
	}
	d := c.Defaults
	paused := false
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) {
		q.Description = c.Description
		paused = c.Paused && !q.Paused
		q.Paused = c.Paused
		if !c.Paused {
			q.Draining = false
		}
		q.MaxActive = c.Max
		q.KeyMax = c.KeyMax
		q.Push = nil
		if c.Push != nil {
			p := *c.Push
			p.DisabledAt, p.DisabledReason = 0, ""
			q.Push = &p
		}
		switch {
		case c.Rate == 0:
			q.Throttle = nil
		case q.Throttle != nil && q.Throttle.Period == c.Period:
			q.Throttle.Rate = c.Rate
		default:
			q.Throttle = newThrottle(c.Rate, c.Period)
		}
		q.Defaults = nil
		if d != (QueueDefaults{}) {
			q.Defaults = &d
		}
	})
	e.queuePaused(tx, c.NS, c.Queue, paused)
	e.recountBlocked(tx, c.NS, c.Queue)
	e.wakeQueue(tx, c.NS, c.Queue)
	return replica.None{}, nil
}

// wakeQueue wakes parked fetches of a queue that may hand out jobs again.
func (e *Engine) wakeQueue(tx *replica.Tx, ns, queue string) {
	q := e.queues.get(tx, ns, queue)
	if n := q.pending(); n > 0 {
		e.wake(tx, ns, queue, int(n))
	}
}

// applyQueueClear is the QueueClear of older logs: pending, then
// scheduled jobs go, and what waits on them is left as it was.
func (e *Engine) applyQueueClear(tx *replica.Tx, c *QueueSweepCmd) (*QueueStep, error) {
	return e.clearQueue(tx, c, false)
}

// applyQueueClearAll removes the queue's pending jobs (phase 0), then its
// scheduled and retrying ones (phase 1, walking the due index from After),
// settling what waits on each (discard).
func (e *Engine) applyQueueClearAll(tx *replica.Tx, c *QueueSweepCmd) (*QueueStep, error) {
	return e.clearQueue(tx, c, true)
}

func (e *Engine) clearQueue(tx *replica.Tx, c *QueueSweepCmd, all bool) (*QueueStep, error) {
	if !e.queues.exists(tx, c.NS, c.Queue) {
		return nil, queueNotFound(c.Queue)
	}
	remove := e.removeJob
	if all {
		remove = e.discard
	}
	out := &QueueStep{Phase: c.Phase}
	if c.Phase == 0 {
		// The plain pending index, then the keyed one (empty in logs from
		// before keys, so those replay as they first applied).
		pendingID := func(k []byte) (string, bool) {
			id, err := keys.PendingID(k)
			return id, err == nil
		}
		isPending := func(j *job.Job) bool { return j.Queue == c.Queue && j.State == job.Pending }
		p := keys.PendingQueue(c.NS, c.Queue)
		kp := keys.KeyedQueue(c.NS, keys.KindKeyedPending, c.Queue)
		if !bytes.HasPrefix(c.After, kp) {
			out.Removed, out.Next = e.dropRange(tx, c.NS, e.heads.get(c.NS, c.Queue).floor, keys.PrefixEnd(p),
				pendingID, isPending, remove)
		}
		if out.Next == nil && out.Removed < queueStepRemove {
			lower := c.After
			if !bytes.HasPrefix(lower, kp) {
				lower = kp
			}
			var n int
			n, out.Next = e.dropRange(tx, c.NS, lower, keys.PrefixEnd(kp), pendingID, isPending, remove)
			out.Removed += n
		} else if out.Next == nil {
			out.Next = kp
		}
		if out.Next == nil {
			out.Phase, out.Next = 1, keys.TimeIndex(c.NS, keys.KindDue)
		}
		return out, nil
	}
	due := keys.TimeIndex(c.NS, keys.KindDue)
	lower := c.After
	if !bytes.HasPrefix(lower, due) {
		lower = due
	}
	out.Removed, out.Next = e.dropRange(tx, c.NS, lower, keys.PrefixEnd(due), func(k []byte) (string, bool) {
		_, id, err := keys.ParseTimed(c.NS, keys.KindDue, k)
		return id, err == nil
	}, func(j *job.Job) bool {
		return j.Queue == c.Queue && (j.State == job.Scheduled || all && j.State == job.Retrying)
	}, remove)
	return out, nil
}

// applyQueueDelete is the QueueDelete of older logs: see deleteQueue.
func (e *Engine) applyQueueDelete(tx *replica.Tx, c *QueueSweepCmd) (*QueueStep, error) {
	return e.deleteQueue(tx, c, e.removeJob)
}

// applyQueueDeleteSettle is deleteQueue settling what waits on each job.
func (e *Engine) applyQueueDeleteSettle(tx *replica.Tx, c *QueueSweepCmd) (*QueueStep, error) {
	return e.deleteQueue(tx, c, e.discard)
}

// deleteQueue removes every job of the queue, walking the job records
// from After; the last step removes the queue's settings, its unique locks
// and, when no job of it is left, its record.
func (e *Engine) deleteQueue(tx *replica.Tx, c *QueueSweepCmd, remove func(*replica.Tx, string, *job.Job)) (*QueueStep, error) {
	if !e.queues.exists(tx, c.NS, c.Queue) {
		return nil, queueNotFound(c.Queue)
	}
	p := keys.Job(c.NS, "")
	lower := c.After
	if !bytes.HasPrefix(lower, p) {
		lower = p
	}
	out := &QueueStep{}
	out.Removed, out.Next = e.dropRange(tx, c.NS, lower, keys.PrefixEnd(p), func(k []byte) (string, bool) {
		return string(k[len(p):]), len(k) == len(p)+keys.JobIDLen
	}, func(j *job.Job) bool { return j.Queue == c.Queue }, remove)
	if out.Next != nil {
		return out, nil
	}
	up := keys.Unique(c.NS, c.Queue, "")
	must(tx.DeleteRange(up, keys.PrefixEnd(up), nil))
	q := e.queues.get(tx, c.NS, c.Queue)
	e.dropSchema(tx, c.NS, q)
	left := false
	for _, n := range q.Counts {
		left = left || n != 0
	}
	if left {
		// Jobs enqueued while the queue was being deleted keep it (and
		// the count of its keyed pending jobs, which its fetches need).
		e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) {
			// Its schema's versions go on counting, as its jobs
			// recorded them.
			*q = QueueRecord{Name: q.Name, Counts: q.Counts, Keyed: q.Keyed, SchemaSeq: q.SchemaSeq}
		})
	} else {
		e.queues.drop(tx, c.NS, c.Queue)
	}
	return out, nil
}

// dropRange walks keys in [lower, upper), and removes the jobs they name
// that match accepts, up to the step bounds. next is the first key not
// looked at when the walk stopped early, else nil. Each job is read again
// just before it goes: settling one (discard) may have changed another.
func (e *Engine) dropRange(tx *replica.Tx, ns string, lower, upper []byte,
	idOf func(k []byte) (string, bool), match func(*job.Job) bool,
	remove func(*replica.Tx, string, *job.Job)) (removed int, next []byte) {
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	must(err)
	var drop []string
	scanned := 0
	for ok := it.First(); ok; ok = it.Next() {
		if scanned == queueStepScan || len(drop) == queueStepRemove {
			next = append([]byte(nil), it.Key()...)
			break
		}
		scanned++
		id, ok := idOf(it.Key())
		if !ok {
			continue
		}
		if j, err := e.getJob(tx, ns, id); err == nil && match(j) {
			drop = append(drop, id)
		}
	}
	must(it.Close())
	for _, id := range drop {
		if j, err := e.getJob(tx, ns, id); err == nil && match(j) {
			remove(tx, ns, j)
			removed++
		}
	}
	return removed, next
}

// queuePaused logs queue.paused when a change paused the queue.
func (e *Engine) queuePaused(tx *replica.Tx, ns, queue string, paused bool) {
	if paused {
		e.logEvent(tx, ns, Event{Type: EvQueuePaused, Subject: queue, Queue: queue})
	}
}
