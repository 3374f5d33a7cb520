package engine

import (
	"encoding/binary"
	"errors"
	"sync/atomic"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// The event log: each namespace's lifecycle events, written by the apply
// that made the change, in the same batch, under keys.Event ordered by
// sequence number: a key an event, or once the log writes blocks a key
// an entry and namespace (eventblock.go). Every member writes the same
// log, so a stream (GET /api/v1/events) resumes on any node, across
// leader changes and restarts.
//
// A sequence number is the Raft index of the entry that made the event,
// shifted left by EventSeqBits, plus the event's position in that entry,
// so every member numbers an event alike.
//
// Writing events changes the state an apply produces, so the log is
// switched on by a command of its own (EventLogStart, once per shard,
// proposed by the leader's loop when it starts leading and before the
// first enqueue, as metering is): a log written before it replays as it
// first applied (no events), and a node that does not know the command
// stops instead of diverging. Events of entries before the start were
// never kept: the start's own sequence number is every namespace's first
// floor.
//
// The leader's sweep trims each namespace's log by age and by count (its
// plan's EventRetention, eventretention.go) through EventTrim, which deletes the events at or
// below a sequence number the leader chose and raises the namespace's
// floor (keys.EventFloor) there; a reader resuming below the floor is
// told it missed events.
const (
	EventSeqBits = 20
	eventSeqMask = 1<<EventSeqBits - 1
)

// Event is one entry of a namespace's log. Type names the change: a
// job's (EventType, no dot), or another thing's, dotted
// (eventlog_things.go), whose Subject and Detail follow the job fields
// in the record's encoding.
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
	Subject  string // another thing's event: the id of what changed
	Detail   string // another thing's event: how it ended, or why; a job's dead event: non_retryable when that is why
	// Counts are a batch.completed's: its jobs, succeeded, failed (dead),
	// cancelled (cancelled, or deleted unfinished); after Detail.
	Counts []int
}

// EventType names a job's change: "enqueued", "started", "completed",
// "failed" (an attempt failed: the job is retrying, or pending again after
// a lost lease or a retry without backoff), "lease_released" (pending
// again because its worker went away before the job was handed over; the
// attempt did not count), "dead", "cancelled", "pending" (a scheduled or
// retrying job became due) and "retried" (a finished job retried by hand).
func EventType(from, to job.State, released bool) string {
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

// EventLogStartCmd switches the shard's event log on (a no-op once on).
type EventLogStartCmd struct{}

// EventTrimCmd deletes ns's events at or below Through and raises its
// floor there: one range delete, however many events it covers.
type EventTrimCmd struct {
	NS      string `codec:"n"`
	Through uint64 `codec:"t"`
}

func (c *EventTrimCmd) namespace() string { return c.NS }

// eventLog is the FSM goroutine's view of the switch and the position of
// the next event in the entry being applied.
type eventLog struct {
	state int8   // usageUnknown, usageOff, usageOn: the same three states as metering
	start uint64 // the start's sequence number, once on
	wide  bool   // events of other things than jobs are logged (EventLogStartWide)
	// detailed: batch.completed carries its counts, and a chain whose
	// unfinished step is deleted ends (EventLogStartDetailed).
	detailed bool
	tx       *replica.Tx
	pos      uint64
	buf      []byte

	// counted: each namespace's events are counted (eventcount.go);
	// counts holds them as changed in this batch, dirty those to write.
	counted  bool
	counts   map[string]*eventCount
	dirty    []string
	flushing bool

	// blocks: an entry's events of a namespace go under one key
	// (eventblock.go); blocksHeld are those of the entry being applied,
	// to be written to held's batch.
	blocks     bool
	blocksHeld []eventBlock
	held       *replica.Tx
	val        []byte

	// kept: the log stays the shard's own across restores and moves
	// (eventkept.go).
	kept bool

	live         atomic.Uint64 // the start's sequence number as committed, 0 while off
	liveWide     atomic.Bool   // wide as committed
	liveDetailed atomic.Bool   // detailed as committed
	liveCounted  atomic.Bool   // counted as committed
	liveBlocks   atomic.Bool   // blocks as committed
	liveKept     atomic.Bool   // kept as committed
}

func (l *eventLog) reset() {
	l.state, l.start, l.wide, l.detailed, l.tx, l.pos = usageUnknown, 0, false, false, nil, 0
	l.counted, l.counts, l.dirty, l.flushing = false, map[string]*eventCount{}, nil, false
	l.blocks, l.blocksHeld, l.held = false, l.blocksHeld[:0], nil
	l.kept = false
}

func (l *eventLog) on(r pebble.Reader) bool {
	if l.state == usageUnknown {
		l.state = usageOff
		if s, wide, counted, ok := readEventStart(r); ok {
			l.state, l.start, l.wide, l.counted = usageOn, s, wide, counted
			l.detailed = eventLogLevel(r) >= eventLogDetailedMarker
			l.blocks = eventLogBlocks(r)
			l.liveBlocks.Store(l.blocks)
			l.kept = eventLogKept(r)
			l.liveKept.Store(l.kept)
			l.live.Store(s)
			l.liveWide.Store(wide)
			l.liveDetailed.Store(l.detailed)
			l.liveCounted.Store(counted)
		}
	}
	return l.state == usageOn
}

// next is the sequence number of tx's next event, and false past the
// positions an entry has (an entry moves at most 512 commands × 1,000
// jobs, under 2^20).
func (l *eventLog) next(tx *replica.Tx) (uint64, bool) {
	if l.tx != tx {
		l.tx, l.pos = tx, 0
	}
	if l.pos > eventSeqMask {
		return 0, false
	}
	seq := tx.Index<<EventSeqBits | l.pos
	l.pos++
	return seq, true
}

// readEventStart reads the start record: the start's sequence number,
// a byte after it once the log is wide (1, or 2 once it is also
// detailed), and another (eventLogCountedMarker) once it is counted.
func readEventStart(r pebble.Reader) (start uint64, wide, counted, ok bool) {
	v, closer, err := r.Get(keys.EventLogStart())
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, false, false
	}
	must(err)
	defer closer.Close()
	wide = len(v) >= eventLogStartLenWide && v[8] >= eventLogWideMarker
	counted = len(v) >= eventLogStartLenCounted && v[9] == eventLogCountedMarker
	return binary.BigEndian.Uint64(v), wide, counted, true
}

// writeEventStart writes the start record as l holds it: the start's
// sequence number, then (once wide) its level, 1 or 2 once detailed,
// then (once counted) eventLogCountedMarker, then (once it writes blocks)
// eventLogBlocksMarker, then (once kept) eventLogKeptMarker. Each switch
// keeps the others.
func (l *eventLog) writeEventStart(tx *replica.Tx) {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, eventLogStartLenKept), l.start)
	if l.wide || l.counted {
		level := byte(eventLogWideMarker)
		if l.detailed {
			level = eventLogDetailedMarker
		}
		v = append(v, level)
	}
	if l.counted {
		v = append(v, eventLogCountedMarker)
	}
	if l.blocks {
		v = append(v, eventLogBlocksMarker)
	}
	if l.kept {
		v = append(v, eventLogKeptMarker)
	}
	must(tx.Set(keys.EventLogStart(), v, nil))
}

func (e *Engine) applyEventLogStart(tx *replica.Tx, _ *EventLogStartCmd) (replica.None, error) {
	l := e.events
	if l.on(tx) {
		return replica.None{}, nil
	}
	tx.MarkDirty()
	l.state, l.start = usageOn, tx.Index<<EventSeqBits
	l.writeEventStart(tx)
	start := l.start
	tx.AfterCommit(func() { l.live.Store(start) })
	return replica.None{}, nil
}

// applyEventTrim deletes every key of ns's log at or below Through; a
// block that holds events after Through is written again without those
// at or below it, under Through+1, so the log (and its count) holds
// exactly the events after Through.
func (e *Engine) applyEventTrim(tx *replica.Tx, c *EventTrimCmd) (int, error) {
	if !e.events.on(tx) || c.NS == "" || c.Through <= eventFloor(tx, c.NS, e.events.start) {
		return 0, nil
	}
	e.events.flushBlocks()
	cut := keys.Event(c.NS, c.Through+1)
	kept := e.events.keepAfter(tx, c.NS, c.Through)
	if e.events.counted {
		e.countEvents(tx, c.NS, -(countRange(tx, keys.EventPrefix(c.NS), cut) - int64(kept)))
	}
	must(tx.DeleteRange(keys.EventPrefix(c.NS), cut, nil))
	if kept > 0 {
		must(tx.Set(cut, e.events.val, nil))
	}
	must(tx.Set(keys.EventFloor(c.NS), binary.BigEndian.AppendUint64(nil, c.Through), nil))
	return 1, nil
}

// hasEventLog reports whether ns has events or a floor: a log a reader
// may resume in. A namespace that never had one needs no floor.
func (e *Engine) hasEventLog(tx *replica.Tx, ns string) bool {
	if !e.events.on(tx) {
		return false
	}
	e.events.flushBlocks()
	p := keys.EventPrefix(ns)
	if _, ok := firstKey(tx, p, keys.PrefixEnd(p)); ok {
		return true
	}
	_, ok := firstKey(tx, keys.EventFloor(ns), keys.PrefixEnd(keys.EventFloor(ns)))
	return ok
}

// wipeEvents raises ns's floor past every event so far, after its log
// was wiped (a restore or a move into it): a reader resuming from
// before is told it missed events.
func (e *Engine) wipeEvents(tx *replica.Tx, ns string) {
	if !e.events.on(tx) {
		return
	}
	seq, ok := e.events.next(tx)
	if !ok {
		seq = tx.Index<<EventSeqBits | eventSeqMask
	}
	must(tx.Set(keys.EventFloor(ns), binary.BigEndian.AppendUint64(nil, seq), nil))
}

// eventObserver writes j's change to its namespace's log.
func (e *Engine) eventObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	l := e.events
	if !l.on(tx) {
		return
	}
	seq, ok := l.next(tx)
	if !ok {
		return
	}
	now := tx.Now.UnixNano()
	released := from == job.Active && j.State == job.Pending && j.LastEventIs(job.EvLeaseReleased, now)
	ev := Event{Type: EventType(from, j.State, released), JobID: j.ID, Queue: j.Queue, State: j.State, From: from,
		At: now, Attempt: j.Attempt}
	if j.State == job.Active {
		ev.WorkerID = j.WorkerID
	}
	if j.State == job.Dead && j.DeadReason == job.ReasonNonRetryable {
		// Only the non-retryable fails (FailNonRetryable, FailPushNonRetryable)
		// kill for this reason, so no older command writes other bytes
		// than it always did.
		ev.Detail = j.DeadReason
	}
	l.write(tx, ns, seq, &ev)
	e.countEvents(tx, ns, 1)
}

// eventVersion is the first byte of every encoded event; fields later
// versions add go after the ones below, so a reader of this version reads
// what it knows. A key's value that begins with eventBlockVersion (2) is
// a block of events (eventblock.go), not one: a later event version
// skips that number.
const eventVersion = 1

func appendEvent(b []byte, ev *Event) []byte {
	b = append(b, eventVersion)
	b = appendString(b, ev.Type)
	b = appendString(b, ev.JobID)
	b = appendString(b, ev.Queue)
	b = append(b, byte(ev.State), byte(ev.From))
	b = binary.AppendVarint(b, ev.At)
	b = binary.AppendUvarint(b, uint64(ev.Attempt))
	b = appendString(b, ev.WorkerID)
	if ev.Subject == "" && ev.Detail == "" && len(ev.Counts) == 0 {
		return b // a job's event: the bytes it always had
	}
	b = appendString(appendString(b, ev.Subject), ev.Detail)
	if len(ev.Counts) == 0 {
		return b // the bytes of a log before the details
	}
	b = binary.AppendUvarint(b, uint64(len(ev.Counts)))
	for _, n := range ev.Counts {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeEvent reads an encoded event; ok is false for a corrupt one.
func decodeEvent(v []byte, ev *Event) (ok bool) {
	if len(v) == 0 || v[0] < eventVersion {
		return false
	}
	d := eventDecoder{b: v[1:], ok: true}
	ev.Type, ev.JobID, ev.Queue = d.str(), d.str(), d.str()
	ev.State, ev.From = job.State(d.byte()), job.State(d.byte())
	ev.At = d.varint()
	ev.Attempt = int(d.uvarint())
	ev.WorkerID = d.str()
	if d.ok && len(d.b) > 0 {
		ev.Subject, ev.Detail = d.str(), d.str()
	}
	ev.Counts = nil
	if d.ok && len(d.b) > 0 {
		n := d.uvarint()
		for i := uint64(0); i < n && d.ok && i < 16; i++ {
			ev.Counts = append(ev.Counts, int(d.uvarint()))
		}
	}
	return d.ok
}

type eventDecoder struct {
	b  []byte
	ok bool
}

func (d *eventDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.ok = false
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *eventDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.ok = false
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *eventDecoder) byte() byte {
	if len(d.b) == 0 {
		d.ok = false
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *eventDecoder) str() string {
	n := d.uvarint()
	if !d.ok || uint64(len(d.b)) < n {
		d.ok = false
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
