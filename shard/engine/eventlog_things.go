package engine

import (
	"errors"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Events of other things than jobs, in the same log: a batch or a chain
// that ended, a schedule that fired, a queue paused or its push turned
// off, a webhook endpoint disabled for failing. Each is written by the
// apply that made the change. Their Type is dotted, as webhooks name it;
// Subject is the id of what changed (the queue's name for a queue) and
// Detail how it ended or why.
//
// They change what an apply writes, so they are logged only once
// EventLogStartWide has applied (the leader proposes it as it proposes
// EventLogStart, which it also does when the log is off): a log written
// before it replays as it first applied, and a node that does not know
// it stops instead of diverging. The same goes for their details, once
// EventLogStartDetailed has applied (which makes the log wide first):
// batch.completed carries the batch's counts (Event.Counts: its jobs,
// succeeded, failed, cancelled; a batch counts its cancelled members
// apart from then on), and a chain whose unfinished step is deleted ends
// with chain.completed, cancelled.
const (
	EvBatchCompleted       = "batch.completed"     // Subject the batch, Queue its callback's, JobID the callback job
	EvChainCompleted       = "chain.completed"     // Subject the chain, Queue and JobID its last step's, Detail ChainSucceeded…
	EvScheduleFired        = "schedule.fired"      // Subject the schedule, Queue its, JobID the job it made (or the one holding its key)
	EvQueuePaused          = "queue.paused"        // Subject and Queue the queue
	EvQueuePushDisabled    = "queue.push_disabled" // Subject and Queue the queue, Detail the reason
	EvWebhookDisabled      = "webhook.disabled"    // Subject the endpoint, Detail the reason
	ChainSucceeded         = "succeeded"           // its last step completed
	ChainExited            = "exited"              // a step's ack stopped it (step_status exit)
	ChainFailed            = "failed"              // a step died
	ChainCancelled         = "cancelled"           // a step was cancelled, or deleted unfinished
	eventLogWideMarker     = 1
	eventLogDetailedMarker = 2
	eventLogStartLenWide   = 9
)

// IsJob reports whether ev is a job's event.
func (ev *Event) IsJob() bool { return !strings.Contains(ev.Type, ".") }

// DeadReason is what a job's dead event says of why: "non_retryable" (the
// one reason its events carry), else "".
func (ev *Event) DeadReason() string {
	if ev.IsJob() && ev.Type == wire.EventDead {
		return ev.Detail
	}
	return ""
}

// Name is ev's webhook event name: "job.completed", "batch.completed".
func (ev *Event) Name() string {
	if ev.IsJob() {
		return "job." + ev.Type
	}
	return ev.Type
}

// logEvent writes an event of another thing than a job to ns's log, at
// the entry's clock, once the log is wide.
func (e *Engine) logEvent(tx *replica.Tx, ns string, ev Event) {
	l := e.events
	if !l.on(tx) || !l.wide {
		return
	}
	seq, ok := l.next(tx)
	if !ok {
		return
	}
	ev.At = tx.Now.UnixNano()
	l.write(tx, ns, seq, &ev)
	e.countEvents(tx, ns, 1)
}

// applyEventLogStartWide switches the log on (as EventLogStart, when it
// is off) and makes it wide (a no-op once it is).
func (e *Engine) applyEventLogStartWide(tx *replica.Tx, _ *EventLogStartCmd) (replica.None, error) {
	l := e.events
	if l.on(tx) && l.wide {
		return replica.None{}, nil
	}
	if l.state != usageOn {
		must2(e.applyEventLogStart(tx, &EventLogStartCmd{}))
	}
	tx.MarkDirty()
	l.wide = true
	l.writeEventStart(tx)
	tx.AfterCommit(func() { l.liveWide.Store(true) })
	return replica.None{}, nil
}

func must2[T any](_ T, err error) { must(err) }

// applyEventLogStartDetailed makes the log detailed, wide (and on) first
// when it is not (a no-op once it is).
func (e *Engine) applyEventLogStartDetailed(tx *replica.Tx, _ *EventLogStartCmd) (replica.None, error) {
	l := e.events
	if l.on(tx) && l.detailed {
		return replica.None{}, nil
	}
	must2(e.applyEventLogStartWide(tx, &EventLogStartCmd{}))
	tx.MarkDirty()
	l.detailed = true
	l.writeEventStart(tx)
	tx.AfterCommit(func() { l.liveDetailed.Store(true) })
	return replica.None{}, nil
}

// eventLogLevel is the byte after the log's start: 0 (job events only),
// eventLogWideMarker or eventLogDetailedMarker.
func eventLogLevel(r pebble.Reader) byte {
	v, closer, err := r.Get(keys.EventLogStart())
	if errors.Is(err, pebble.ErrNotFound) {
		return 0
	}
	must(err)
	defer closer.Close()
	if len(v) < eventLogStartLenWide {
		return 0
	}
	return v[8]
}

// EventLogDetailed reports whether EventLogStartDetailed applied.
func (e *Engine) EventLogDetailed(r pebble.Reader) bool {
	if e.events.liveDetailed.Load() {
		return true
	}
	d := eventLogLevel(r) >= eventLogDetailedMarker
	if d {
		e.events.liveDetailed.Store(true)
	}
	return d
}

// detailed reports whether this apply writes the details (tx's state).
func (e *Engine) detailed(tx *replica.Tx) bool { return e.events.on(tx) && e.events.detailed }
