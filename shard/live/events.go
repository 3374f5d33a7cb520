package live

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
)

// Lifecycle events. Every node keeps, in memory, the last eventRingSize
// events of each namespace as its applies produce them; the event stream
// (GET /api/v1/events) reads them from there. Nothing here is replicated
// state: a restarted node starts with empty rings.
//
// An event's sequence number is the Raft index of the entry that produced
// it shifted left by eventSeqBits, plus the event's position in that entry,
// so every node numbers the same event alike and a client may resume on
// another node of the shard.
const (
	eventRingSize   = 1024
	eventSeqBits    = 20
	eventSeqMask    = 1<<eventSeqBits - 1
	maxEventStreams = 256 // open streams per namespace on one node
	eventHeartbeat  = 15 * time.Second
	// MaxEventsPerWrite bounds the events a stream reads at once.
	MaxEventsPerWrite = 256
)

// Event is one job entering a state.
type Event struct {
	Seq      uint64
	Type     string
	JobID    string
	Queue    string
	State    job.State
	From     job.State // 0 for a new job
	At       int64     // the entry's time, unix nanoseconds
	Attempt  int
	WorkerID string
}

// eventType names the change: "enqueued", "started", "completed",
// "failed" (an attempt failed: the job is retrying, or pending again after
// a lost lease or a retry without backoff), "lease_released" (pending
// again because its worker went away before the job was handed over; the
// attempt did not count), "dead", "cancelled", "pending" (a scheduled or
// retrying job became due) and "retried" (a finished job retried by hand).
func eventType(from, to job.State, released bool) string {
	switch {
	case from == 0:
		return "enqueued"
	case to == job.Active:
		return "started"
	case from == job.Active && to == job.Pending && released:
		return "lease_released"
	case from == job.Active && (to == job.Retrying || to == job.Pending):
		return "failed"
	case to == job.Pending && from.Terminal():
		return "retried"
	}
	return to.String()
}

// Events holds the rings and wakes the streams reading them. Applies
// append to it after their entry commits and never wait on a reader: a
// stream is only nudged (a non-blocking send on a one-slot channel) and
// reads the ring at its own pace; one that falls more than a ring behind
// is told it missed events.
type Events struct {
	mu       sync.Mutex
	rings    map[string]*eventRing
	since    uint64 // events at or below it were applied before this node watched
	sinceSet bool   // since is set once: by StartAt or the first event

	heartbeat atomic.Int64 // stream heartbeat period, ns (tests shorten it)
}

type nsEvent struct {
	ns string
	ev Event
}

type eventRing struct {
	buf   []Event // circular, oldest at head
	head  int
	since uint64 // every event of the namespace after since is in buf
	last  uint64 // seq of the newest event (or since when none)
	subs  map[*Sub]struct{}
}

// Heartbeat is how often an idle stream sends a comment to keep proxies
// from closing it.
func (h *Events) Heartbeat() time.Duration { return time.Duration(h.heartbeat.Load()) }

// SetHeartbeat changes Heartbeat (tests shorten it).
func (h *Events) SetHeartbeat(d time.Duration) { h.heartbeat.Store(int64(d)) }

// Sub is one stream's subscription to a namespace's events.
type Sub struct {
	ns   string
	wake chan struct{}
}

// Wake receives a nudge when the namespace has new events.
func (s *Sub) Wake() <-chan struct{} { return s.wake }

// NS is the namespace the subscription reads.
func (s *Sub) NS() string { return s.ns }

// NewEvents returns an empty hub.
func NewEvents() *Events {
	h := &Events{rings: map[string]*eventRing{}}
	h.heartbeat.Store(int64(eventHeartbeat))
	return h
}

// StartAt records that this node holds no events of entries up to index.
// It has no effect once an event was seen.
func (h *Events) StartAt(index uint64) {
	h.mu.Lock()
	if !h.sinceSet && index > 0 {
		h.since = index<<eventSeqBits | eventSeqMask
	}
	h.sinceSet = true
	h.mu.Unlock()
}

// Observer returns the engine observer that numbers events inside the
// apply and hands them to the hub once their entry has committed, so an
// entry applied again starts over with nothing.
func (h *Events) Observer() engine.Observer {
	st := &stage[nsEvent]{publish: h.publish}
	return func(tx *replica.Tx, ns string, j *job.Job, from job.State) {
		pos := uint64(st.len(tx))
		if pos > eventSeqMask {
			// An entry moves at most 512 commands × 1,000 jobs, under the
			// 2^20 positions a sequence number has; more are not published.
			return
		}
		released := from == job.Active && j.State == job.Pending && j.LastEventIs(job.EvLeaseReleased, tx.Now.UnixNano())
		ev := Event{Seq: tx.Index<<eventSeqBits | pos, Type: eventType(from, j.State, released), JobID: j.ID, Queue: j.Queue,
			State: j.State, From: from, At: tx.Now.UnixNano(), Attempt: j.Attempt}
		if j.State == job.Active {
			ev.WorkerID = j.WorkerID
		}
		st.add(tx, nsEvent{ns: ns, ev: ev})
	}
}

// publish appends an entry's committed events to their rings and nudges
// readers.
func (h *Events) publish(evs []nsEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var touched []*eventRing // an entry's events are mostly of one namespace
	for i := range evs {
		p := &evs[i]
		if !h.sinceSet {
			h.since, h.sinceSet = p.ev.Seq-1, true
		}
		r := h.ringLocked(p.ns)
		r.add(p.ev)
		if !slices.Contains(touched, r) {
			touched = append(touched, r)
		}
	}
	for _, r := range touched {
		for s := range r.subs {
			select {
			case s.wake <- struct{}{}:
			default: // already nudged
			}
		}
	}
}

func (h *Events) ringLocked(ns string) *eventRing {
	r := h.rings[ns]
	if r == nil {
		r = &eventRing{since: h.since, last: h.since, subs: map[*Sub]struct{}{}}
		h.rings[ns] = r
	}
	return r
}

func (r *eventRing) add(ev Event) {
	if len(r.buf) < eventRingSize {
		r.buf = append(r.buf, ev)
	} else {
		r.since = r.buf[r.head].Seq
		r.buf[r.head] = ev
		r.head = (r.head + 1) % eventRingSize
	}
	r.last = ev.Seq
}

// Subscribe registers a reader of ns's events.
func (h *Events) Subscribe(ns string) (*Sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.ringLocked(ns)
	if len(r.subs) >= maxEventStreams {
		return nil, apierr.Retry(apierr.RateLimited, 5, "at most %d event streams per namespace are open on this node", maxEventStreams)
	}
	s := &Sub{ns: ns, wake: make(chan struct{}, 1)}
	r.subs[s] = struct{}{}
	return s, nil
}

// Nudge wakes every reader of ns (it moved away: they look and end).
func (h *Events) Nudge(ns string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.rings[ns]; r != nil {
		for s := range r.subs {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// Unsubscribe drops a reader.
func (h *Events) Unsubscribe(s *Sub) {
	h.mu.Lock()
	delete(h.rings[s.ns].subs, s)
	h.mu.Unlock()
}

// Latest is the sequence number of the newest event of ns this node has.
func (h *Events) Latest(ns string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ringLocked(ns).last
}

// Read appends to out up to max events of ns after seq. When events after
// seq may have been dropped (the ring moved past it, or they were applied
// before this node watched), missed is true and reading resumes from the
// oldest event kept: the caller should continue after skipTo.
func (h *Events) Read(ns string, after uint64, max int, out []Event) (evs []Event, missed bool, skipTo uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.ringLocked(ns)
	if after < r.since {
		missed, after = true, r.since
	}
	n := len(r.buf)
	// Binary search for the first event after seq, in ring order.
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi) / 2
		if r.buf[(r.head+mid)%n].Seq <= after {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for i := lo; i < n && len(out) < max; i++ {
		out = append(out, r.buf[(r.head+i)%n])
	}
	return out, missed, after
}
