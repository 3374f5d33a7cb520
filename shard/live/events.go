package live

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
)

// Lifecycle events. The events themselves are replicated state, the
// namespace's event log (engine/eventlog.go), which the stream (GET
// /api/v1/events) reads from the node's own store. What lives here is
// the streams: who reads which namespace, and the nudge each gets once an
// entry that wrote events of its namespace has committed, so a stream
// reads the log only when there is something new.
const (
	maxEventStreams = 256 // open streams per namespace on one node
	eventHeartbeat  = 15 * time.Second
	// MaxEventsPerWrite bounds the events a stream reads at once.
	MaxEventsPerWrite = 256
)

// Event is one event of the log.
type Event = engine.Event

// Events reads the log for the streams and wakes them. Applies nudge it
// after their entry commits and never wait on a reader: a stream is only
// nudged (a non-blocking send on a one-slot channel) and reads the log at
// its own pace.
type Events struct {
	db  pebble.Reader
	eng *engine.Engine

	mu   sync.Mutex
	subs map[string]map[*Sub]struct{}

	heartbeat atomic.Int64 // stream heartbeat period, ns (tests shorten it)
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

// NewEvents returns a hub with no streams; Open gives it the log.
func NewEvents() *Events {
	h := &Events{subs: map[string]map[*Sub]struct{}{}}
	h.heartbeat.Store(int64(eventHeartbeat))
	return h
}

// Open gives the hub the engine and the store whose log it reads, once
// the node's state is open.
func (h *Events) Open(eng *engine.Engine, db pebble.Reader) { h.eng, h.db = eng, db }

// Observer returns the engine observer that notes which namespaces an
// entry changed and nudges their streams once it commits (an entry
// applied again starts over with nothing).
func (h *Events) Observer() engine.Observer {
	st := &stage[string]{publish: h.publish}
	return func(tx *replica.Tx, ns string, _ *job.Job, _ job.State) {
		if n := st.len(tx); n > 0 && (*st.buf)[n-1] == ns {
			return // an entry's changes are mostly of one namespace
		}
		st.add(tx, ns)
	}
}

// publish nudges the streams of the namespaces an entry changed.
func (h *Events) publish(nss []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, ns := range nss {
		if slices.Contains(nss[:i], ns) {
			continue
		}
		for s := range h.subs[ns] {
			select {
			case s.wake <- struct{}{}:
			default: // already nudged
			}
		}
	}
}

// Subscribe registers a reader of ns's events.
func (h *Events) Subscribe(ns string) (*Sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.subs[ns]
	if m == nil {
		m = map[*Sub]struct{}{}
		h.subs[ns] = m
	}
	if len(m) >= maxEventStreams {
		return nil, apierr.Retry(apierr.RateLimited, 5, "at most %d event streams per namespace are open on this node", maxEventStreams)
	}
	s := &Sub{ns: ns, wake: make(chan struct{}, 1)}
	m[s] = struct{}{}
	return s, nil
}

// Nudge wakes every reader of ns (it moved away: they look and end).
func (h *Events) Nudge(ns string) { h.publish([]string{ns}) }

// NudgeAll wakes every reader: the node applied an entry without running
// its commands (replica.Registry.OnEffectsApplied), so which namespaces
// it wrote events of is not known here. A reader with nothing new reads
// an empty tail.
func (h *Events) NudgeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for s := range m {
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
	defer h.mu.Unlock()
	delete(h.subs[s.ns], s)
	if len(h.subs[s.ns]) == 0 {
		delete(h.subs, s.ns)
	}
}

// Latest is the sequence number of the newest event of ns in the log.
func (h *Events) Latest(ns string) uint64 { return h.eng.LatestEvent(h.db, ns) }

// Read appends to out up to max events of ns after seq, from the log.
// When events after seq are gone (trimmed by retention, or from before
// the log started or was wiped by a restore), missed is true and reading
// resumes from the oldest event kept: the caller should continue after
// skipTo.
func (h *Events) Read(ns string, after uint64, max int, out []Event) (evs []Event, missed bool, skipTo uint64) {
	return h.eng.ReadEvents(h.db, ns, after, max, out)
}
