package engine

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// Blocks: once EventLogStartBlocks has applied, the events one entry
// writes to a namespace go under one key, keys.Event(ns, first), whose
// value is eventBlockVersion, the count, then each event as appendEvent
// encodes it, length-prefixed; their sequence numbers are first, first+1…
// A job's lifecycle then writes one event key per entry and namespace
// instead of one per change. A block holds consecutive numbers only (an
// entry that interleaves namespaces writes a block per run) and at most
// eventBlockMax events; a block of one is written as a single event.
// Readers take a single event (a log from before the blocks) as a block
// of one.
//
// The events are held per namespace while the entry applies and written
// when the entry ends (BeforeCommit), when the next entry writes its
// first event, or when an apply is about to read or trim the log
// (flushBlocks), or before an entry reads a namespace's keys (settle);
// a range delete of the namespace's keys drops the held
// events it covers (eventsDeleted), so no block outlives a wipe.
//
// Blocks change the keys an apply writes, so they have their switch, a
// byte after the counted marker in keys.EventLogStart (a no-op until the
// log is counted: the leader proposes it after the counted start). A log
// written before replays as it first applied, and a node that does not
// know the command stops instead of diverging.
const (
	eventBlockVersion      = 2
	eventBlockMax          = 256
	eventLogBlocksMarker   = 1
	eventLogStartLenBlocks = eventLogStartLenCounted + 1
)

// eventBlock is a namespace's events held in the entry being applied.
type eventBlock struct {
	ns    string
	first uint64
	n     int
	body  []byte // the events, each length-prefixed
}

// addEvent holds ev, numbered seq, in ns's block of tx's entry.
func (l *eventLog) addEvent(tx *replica.Tx, ns string, seq uint64, ev *Event) {
	tx.MarkDirty() // held in memory: a refused command must redo the group
	if l.held != tx {
		l.flushBlocks() // the entry before is over
		l.held = tx
		tx.BeforeCommit(l.flushBlocks)
	}
	var b *eventBlock
	for i := range l.blocksHeld {
		if l.blocksHeld[i].ns == ns {
			b = &l.blocksHeld[i]
			break
		}
	}
	if b != nil && (seq != b.first+uint64(b.n) || b.n == eventBlockMax) {
		l.writeBlock(b)
	}
	if b == nil {
		if len(l.blocksHeld) < cap(l.blocksHeld) { // reuse a body's room
			l.blocksHeld = l.blocksHeld[:len(l.blocksHeld)+1]
		} else {
			l.blocksHeld = append(l.blocksHeld, eventBlock{})
		}
		b = &l.blocksHeld[len(l.blocksHeld)-1]
		b.ns, b.n, b.body = ns, 0, b.body[:0]
	}
	if b.n == 0 {
		b.first = seq
	}
	l.buf = appendEvent(l.buf[:0], ev)
	b.body = append(binary.AppendUvarint(b.body, uint64(len(l.buf))), l.buf...)
	b.n++
}

// flushBlocks writes every held block.
func (l *eventLog) flushBlocks() {
	for i := range l.blocksHeld {
		l.writeBlock(&l.blocksHeld[i])
	}
	l.blocksHeld = l.blocksHeld[:0]
}

// settle writes the blocks and the counts held for the entries before
// tx's, for a command of tx's entry about to read a namespace's keys (a
// purge's step counting them, a restore's check that it is empty): it
// then sees them as a node that committed those entries in batches of
// their own does. The entry's own held events stay held, as they are on
// every node, and so do the counts it changed first.
func (l *eventLog) settle(tx *replica.Tx) {
	if l.held != tx {
		l.flushBlocks()
	}
	l.flushCountsBefore(tx)
}

// writeBlock writes b (a single event when it holds one) and empties it.
func (l *eventLog) writeBlock(b *eventBlock) {
	if b.n == 0 {
		return
	}
	v := b.body
	if b.n == 1 {
		_, k := binary.Uvarint(v)
		v = v[k:]
	} else {
		l.val = append(binary.AppendUvarint(append(l.val[:0], eventBlockVersion), uint64(b.n)), b.body...)
		v = l.val
	}
	must(l.held.Set(keys.Event(b.ns, b.first), v, nil)) // the batch copies it
	b.n, b.body = 0, b.body[:0]
}

// dropHeld forgets ns's held events whose block key lies in [lower,
// upper): a range delete took them before they were written.
func (l *eventLog) dropHeld(ns string, lower, upper []byte) {
	for i := range l.blocksHeld {
		b := &l.blocksHeld[i]
		if b.ns != ns || b.n == 0 {
			continue
		}
		if k := keys.Event(ns, b.first); bytes.Compare(k, lower) >= 0 && bytes.Compare(k, upper) < 0 {
			b.n, b.body = 0, b.body[:0]
		}
	}
}

// blockCount is how many events an event key's value holds: 1 for a
// single event, a block's count, 0 for a block it cannot read.
func blockCount(v []byte) int {
	if len(v) == 0 || v[0] != eventBlockVersion {
		return 1
	}
	c, k := binary.Uvarint(v[1:])
	if k <= 0 {
		return 0
	}
	return int(c)
}

// eventIter walks a namespace's events in order, across blocks and
// single events alike.
type eventIter struct {
	it   *pebble.Iterator
	ns   string
	Seq  uint64 // the current event's
	ev   []byte // its encoding; nil when its block is unreadable
	rest []byte // the block's events after it
	ok   bool
}

func newEventIter(r pebble.Reader, ns string) *eventIter {
	p := keys.EventPrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	return &eventIter{it: it, ns: ns}
}

func (x *eventIter) close() { must(x.it.Close()) }

// first moves to the oldest event.
func (x *eventIter) first() bool { return x.load(x.it.First()) }

// seekAfter moves to the first event after seq: into the block that
// holds seq+1, if one does.
func (x *eventIter) seekAfter(seq uint64) bool {
	var ok bool
	if seq < math.MaxUint64-1 {
		ok = x.it.SeekLT(keys.Event(x.ns, seq+2))
	} else {
		ok = x.it.Last() // seq+2 wraps (a client's cursor): from the newest block, not the oldest
	}
	if !ok {
		ok = x.it.First()
	}
	for ok = x.load(ok); ok && x.Seq <= seq; {
		ok = x.next()
	}
	return ok
}

// next moves to the next event.
func (x *eventIter) next() bool {
	if len(x.rest) > 0 {
		x.Seq++
		return x.take()
	}
	return x.load(x.it.Next())
}

// decode reads the current event into ev (its Seq included); false for
// one this version cannot read.
func (x *eventIter) decode(ev *Event) bool {
	if x.ev == nil || !decodeEvent(x.ev, ev) {
		return false
	}
	ev.Seq = x.Seq
	return true
}

// load takes the first event of the key the iterator is at.
func (x *eventIter) load(ok bool) bool {
	x.ok = ok
	if !ok {
		return false
	}
	v := x.it.Value()
	seq, err := keys.ParseEvent(x.ns, x.it.Key())
	must(err)
	x.Seq, x.ev, x.rest = seq, v, nil
	if len(v) == 0 || v[0] != eventBlockVersion {
		return true
	}
	if _, k := binary.Uvarint(v[1:]); k > 0 {
		x.rest = v[1+k:]
	}
	return x.take()
}

// take moves to the next event of the block; an unreadable rest is one
// unreadable event.
func (x *eventIter) take() bool {
	n, k := binary.Uvarint(x.rest)
	if k <= 0 || uint64(len(x.rest)-k) < n {
		x.ev, x.rest = nil, nil
		return true
	}
	x.ev, x.rest = x.rest[k:k+int(n)], x.rest[k+int(n):]
	return true
}

// eventLogBlocks reports whether r's start record says the log writes
// blocks.
func eventLogBlocks(r pebble.Reader) bool {
	v, closer, err := r.Get(keys.EventLogStart())
	if err != nil {
		return false
	}
	defer closer.Close()
	return len(v) >= eventLogStartLenBlocks && v[eventLogStartLenCounted] == eventLogBlocksMarker
}

// EventLogBlocks reports whether the log writes blocks
// (EventLogStartBlocks applied).
func (e *Engine) EventLogBlocks(r pebble.Reader) bool {
	if e.events.liveBlocks.Load() {
		return true
	}
	b := eventLogBlocks(r)
	if b {
		e.events.liveBlocks.Store(true)
	}
	return b
}

// applyEventLogStartBlocks makes a counted log write blocks (a no-op
// until it is counted, and once it writes them).
func (e *Engine) applyEventLogStartBlocks(tx *replica.Tx, _ *EventLogStartCmd) (replica.None, error) {
	l := e.events
	if !l.on(tx) || !l.counted || l.blocks {
		return replica.None{}, nil
	}
	tx.MarkDirty()
	l.blocks = true
	l.writeEventStart(tx)
	tx.AfterCommit(func() { l.liveBlocks.Store(true) })
	return replica.None{}, nil
}

// write writes ev, numbered seq, to ns's log: held in its block once the
// log writes blocks, else under a key of its own.
func (l *eventLog) write(tx *replica.Tx, ns string, seq uint64, ev *Event) {
	if l.blocks {
		l.addEvent(tx, ns, seq, ev)
		return
	}
	l.buf = appendEvent(l.buf[:0], ev)
	must(tx.Set(keys.Event(ns, seq), l.buf, nil)) // the batch copies it
}

// keepAfter is for a trim through seq: when the block holding seq holds
// events after it too, it puts those in l.val, as the value to write
// under seq+1, and returns how many.
func (l *eventLog) keepAfter(r pebble.Reader, ns string, seq uint64) int {
	x := newEventIter(r, ns)
	defer x.close()
	if !x.load(x.it.SeekLT(keys.Event(ns, seq+1))) || len(x.rest) == 0 {
		return 0
	}
	first, n := x.Seq, blockCount(x.it.Value())
	if first+uint64(n) <= seq+1 {
		return 0 // its last event goes too
	}
	for x.Seq <= seq && len(x.rest) > 0 {
		x.next()
	}
	if x.Seq <= seq || x.ev == nil {
		return 0 // unreadable: it goes whole
	}
	kept := int(first + uint64(n) - x.Seq)
	if kept == 1 {
		l.val = append(l.val[:0], x.ev...)
		return 1
	}
	l.val = binary.AppendUvarint(append(l.val[:0], eventBlockVersion), uint64(kept))
	l.val = append(binary.AppendUvarint(l.val, uint64(len(x.ev))), x.ev...)
	l.val = append(l.val, x.rest...) // the rest, length-prefixed as they are
	return kept
}
