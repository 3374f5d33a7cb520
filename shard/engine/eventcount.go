package engine

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// Each namespace's count of events in its log (keys.EventCount), so the
// leader's trim by count reads only the events it drops instead of
// counting back from the newest over the whole retention. The count is
// changed by the apply that writes an event and by the trim that deletes
// them, kept in memory and written once per batch like the queue records.
//
// Counting changes what applies write, so it has its switch, a byte after
// the wide marker in keys.EventLogStart, set by EventLogStartCounted (86,
// which starts the log and makes it wide too when it is not): it counts
// every namespace's log as it stands, and every later event counts. A log
// written before it replays as it first applied, and a node that does not
// know the command stops instead of diverging.
const (
	eventLogCountedMarker   = 1
	eventLogStartLenCounted = eventLogStartLenWide + 1
)

// eventCount is a namespace's count as the FSM goroutine holds it.
type eventCount struct {
	n     int64
	dirty bool        // to be written before the batch commits
	since *replica.Tx // the entry that made it dirty
}

// countEvents moves ns's count by d, once counting is on (FSM goroutine).
func (e *Engine) countEvents(tx *replica.Tx, ns string, d int64) {
	l := e.events
	if !l.counted {
		return
	}
	c, ok := l.counts[ns]
	if !ok {
		c = &eventCount{n: readEventCount(tx, ns)}
		l.counts[ns] = c
	}
	tx.MarkDirty()
	c.n += d
	if !c.dirty {
		c.dirty, c.since = true, tx
		l.dirty = append(l.dirty, ns)
	}
	if !l.flushing {
		l.flushing = true
		tx.BeforeCommit(func() { l.flushCounts(tx) })
	}
}

func (l *eventLog) flushCounts(tx *replica.Tx) {
	for _, ns := range l.dirty {
		if c, ok := l.counts[ns]; ok && c.dirty {
			must(tx.Set(keys.EventCount(ns), binary.AppendUvarint(nil, uint64(max(c.n, 0))), nil))
			c.dirty = false
		}
	}
	l.dirty, l.flushing = l.dirty[:0], false
}

// flushCountsBefore writes the counts made dirty by entries before tx's
// (eventLog.settle); the others stay dirty, for the batch's end.
func (l *eventLog) flushCountsBefore(tx *replica.Tx) {
	kept := l.dirty[:0]
	for _, ns := range l.dirty {
		c, ok := l.counts[ns]
		switch {
		case !ok || !c.dirty:
		case c.since != tx:
			must(tx.Set(keys.EventCount(ns), binary.AppendUvarint(nil, uint64(max(c.n, 0))), nil))
			c.dirty = false
		default:
			kept = append(kept, ns)
		}
	}
	l.dirty = kept
}

// eventsDeleted is told that [lower, upper) of ns's keys were deleted
// (a purge step, a restore's wipe): the events held for a block there go
// with them (eventblock.go). When that took events or the count,
// the count goes too, in the state and in memory: the events left (a purge
// deletes in steps) and those written after count from 0, so the count
// may say fewer than the log holds until the purge ends, never more (a
// trim by count never drops what it should keep).
func (e *Engine) eventsDeleted(tx *replica.Tx, ns string, lower, upper []byte) {
	l := e.events
	if !l.on(tx) {
		return
	}
	l.dropHeld(ns, lower, upper)
	if !l.counted {
		return
	}
	ep, ck := keys.EventPrefix(ns), keys.EventCount(ns)
	inRange := func(k []byte) bool { return bytes.Compare(k, lower) >= 0 && bytes.Compare(k, upper) < 0 }
	touchesEvents := bytes.Compare(lower, keys.PrefixEnd(ep)) < 0 && bytes.Compare(upper, ep) > 0
	if !touchesEvents && !inRange(ck) {
		return
	}
	must(tx.Delete(ck, nil))
	if _, ok := l.counts[ns]; ok {
		tx.MarkDirty()
		delete(l.counts, ns)
	}
}

// readEventCount is ns's count as r holds it; 0 when none was written.
func readEventCount(r pebble.Reader, ns string) int64 {
	v, closer, err := r.Get(keys.EventCount(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0
	}
	must(err)
	defer closer.Close()
	n, _ := binary.Uvarint(v)
	return int64(n)
}

// EventCount is ns's count of events as committed in r, and false while
// the log is not counted (the trim then counts back from the newest).
func (e *Engine) EventCount(r pebble.Reader, ns string) (int64, bool) {
	if !e.EventLogCounted(r) {
		return 0, false
	}
	return readEventCount(r, ns), true
}

// EventLogCounted reports whether the log keeps its counts
// (EventLogStartCounted applied).
func (e *Engine) EventLogCounted(r pebble.Reader) bool {
	if e.events.liveCounted.Load() {
		return true
	}
	_, _, counted, _ := readEventStart(r)
	if counted {
		e.events.liveCounted.Store(true)
	}
	return counted
}

// countRange is how many events the keys in [lower, upper) of an event
// log hold: one a single event, a block its count.
func countRange(r pebble.Reader, lower, upper []byte) int64 {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	must(err)
	defer func() { must(it.Close()) }()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n += int64(blockCount(it.Value()))
	}
	return n
}

// applyEventLogStartCounted starts the log and makes it wide when it is
// not, then counts every namespace's events (a no-op once counted).
func (e *Engine) applyEventLogStartCounted(tx *replica.Tx, _ *EventLogStartCmd) (replica.None, error) {
	l := e.events
	if l.on(tx) && l.counted {
		return replica.None{}, nil
	}
	must2(e.applyEventLogStartWide(tx, &EventLogStartCmd{}))
	tx.MarkDirty()
	l.flushBlocks()
	for _, ns := range Namespaces(tx) {
		p := keys.EventPrefix(ns)
		if n := countRange(tx, p, keys.PrefixEnd(p)); n > 0 {
			must(tx.Set(keys.EventCount(ns), binary.AppendUvarint(nil, uint64(n)), nil))
		}
	}
	l.counted = true
	l.writeEventStart(tx)
	tx.AfterCommit(func() { l.liveCounted.Store(true) })
	return replica.None{}, nil
}
