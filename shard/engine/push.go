package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
)

// Push queues: a queue's push settings live on its record; the shard
// leader's dispatcher (shard/push) reads them and delivers the queue's
// jobs through the same commands a worker uses.

// PushWorker is the worker id the dispatcher leases a queue's jobs under:
// a settle by it is a push delivery (AckPush, FailPush).
func PushWorker(queue string) string { return "push:" + queue }

// PushConfig is a queue's push settings (QueueConfigCmd.Push).
type PushConfig struct {
	URL         string       `codec:"u"`
	WhenNoWork  bool         `codec:"w,omitempty"` // mode when_no_workers; else always
	TimeoutNs   int64        `codec:"t"`
	MaxInFlight int          `codec:"m"`
	Headers     []PushHeader `codec:"h,omitempty"` // sorted by name: a map's order would not be deterministic
	// DisabledAt and DisabledReason are set by push.disable (a handler
	// answered 410 Gone); a queue configure clears them.
	DisabledAt     int64  `codec:"da,omitempty"`
	DisabledReason string `codec:"dr,omitempty"`
}

// PushHeader is one header sent with every delivery.
type PushHeader struct {
	Name  string `codec:"n"`
	Value string `codec:"v"`
}

// Active reports whether the dispatcher pushes the queue.
func (p *PushConfig) Active() bool { return p != nil && p.DisabledAt == 0 }

// PushDisableCmd stops pushing a queue (its handler answered 410): only
// while its push URL is still URL, so a PUT that changed it meanwhile
// stands.
type PushDisableCmd struct {
	NS     string `codec:"ns"`
	Queue  string `codec:"q"`
	URL    string `codec:"u"`
	Reason string `codec:"r"`
}

func (c *PushDisableCmd) namespace() string { return c.NS }

// applyPushDisable marks the queue's push disabled, at the entry's clock.
// It reports whether it did (false: the queue is no longer pushed to
// that URL).
func (e *Engine) applyPushDisable(tx *replica.Tx, c *PushDisableCmd) (bool, error) {
	if !e.queues.exists(tx, c.NS, c.Queue) {
		return false, queueNotFound(c.Queue)
	}
	q := e.queues.get(tx, c.NS, c.Queue)
	if q.Push == nil || q.Push.URL != c.URL || q.Push.DisabledAt != 0 {
		return false, nil
	}
	e.queues.update(tx, c.NS, c.Queue, func(q *QueueRecord) {
		p := *q.Push
		p.DisabledAt, p.DisabledReason = tx.Now.UnixNano(), c.Reason
		q.Push = &p
	})
	e.logEvent(tx, c.NS, Event{Type: EvQueuePushDisabled, Subject: c.Queue, Queue: c.Queue, Detail: c.Reason})
	return true, nil
}
