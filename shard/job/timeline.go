package job

import (
	"fmt"
	"unicode/utf8"
)

// EventKind names one entry of a job's timeline. On-disk values, never
// renumber; append new kinds.
type EventKind uint8

const (
	EvEnqueued        EventKind = 1  // detail: "scheduled for <time>" when delayed
	EvStarted         EventKind = 2  // detail: "worker <id> attempt <n>"
	EvProgress        EventKind = 3  // detail: the progress JSON (only the last one is kept)
	EvFailed          EventKind = 4  // detail: the error
	EvRetryScheduled  EventKind = 5  // detail: the time of the next attempt
	EvLeaseExpired    EventKind = 6  // detail: the attempt
	EvCompleted       EventKind = 7  //
	EvCancelled       EventKind = 8  //
	EvCancelRequested EventKind = 9  // detail: the worker holding it
	EvMoved           EventKind = 10 // detail: "<from> → <to>"
	EvRetried         EventKind = 11 // manual retry
	EvExpired         EventKind = 12 // TTL passed
	EvDead            EventKind = 13 // detail: the reason
	EvReleased        EventKind = 14 // a held job's dependencies are done
	EvLeaseReleased   EventKind = 15 // detail: the worker that went away before the job was handed over
)

var eventNames = map[EventKind]string{
	EvEnqueued: "enqueued", EvStarted: "started", EvProgress: "progress", EvFailed: "failed",
	EvRetryScheduled: "retry_scheduled", EvLeaseExpired: "lease_expired", EvCompleted: "completed",
	EvCancelled: "cancelled", EvCancelRequested: "cancel_requested", EvMoved: "moved",
	EvRetried: "retried", EvExpired: "expired", EvDead: "dead", EvReleased: "released",
	EvLeaseReleased: "lease_released",
}

func (k EventKind) String() string {
	if n, ok := eventNames[k]; ok {
		return n
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is one timeline entry.
type Event struct {
	At     int64 // unix ns, from the entry's clock
	Kind   EventKind
	Detail string
}

// MaxTimeline bounds a job's timeline: older events are dropped first.
const MaxTimeline = 100

// maxDetail bounds one event's detail, in bytes.
const maxDetail = 200

// Record appends an event to j's timeline, keeping it bounded. A progress
// event replaces the previous progress event, so a job that reports
// progress every second keeps one.
func (j *Job) Record(at int64, kind EventKind, detail string) {
	if len(detail) > maxDetail {
		n := maxDetail
		for n > 0 && !utf8.RuneStart(detail[n]) {
			n--
		}
		detail = detail[:n]
	}
	if kind == EvProgress {
		for i := len(j.Timeline) - 1; i >= 0; i-- {
			if j.Timeline[i].Kind == EvProgress {
				j.Timeline = append(j.Timeline[:i], j.Timeline[i+1:]...)
				break
			}
		}
	}
	if len(j.Timeline) >= MaxTimeline {
		n := len(j.Timeline) - MaxTimeline + 1
		j.Timeline = append(j.Timeline[:0], j.Timeline[n:]...)
	}
	if j.Timeline == nil {
		// Room for the common life (enqueued, started, completed) at once,
		// rather than growing at each of its events.
		j.Timeline = make([]Event, 0, lifeEvents)
	}
	j.Timeline = append(j.Timeline, Event{At: at, Kind: kind, Detail: detail})
}

// lifeEvents is the timeline capacity a job starts with: one run's events
// and one more.
const lifeEvents = 4

// LastEventIs reports whether j's last timeline event is kind, recorded
// at (a command's time): what a command recorded just before it moved j,
// so observers can tell apart two changes between the same states.
func (j *Job) LastEventIs(kind EventKind, at int64) bool {
	n := len(j.Timeline)
	return n > 0 && j.Timeline[n-1].Kind == kind && j.Timeline[n-1].At == at
}
