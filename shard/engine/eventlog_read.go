package engine

import (
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/keys"
)

// Reads of the event log, safe from any goroutine: r is the node's store
// (or a snapshot of it).

// EventLogStart is the sequence number the shard's event log started at,
// and false while it is off.
func (e *Engine) EventLogStart(r pebble.Reader) (uint64, bool) {
	if s := e.events.live.Load(); s != 0 {
		return s, true
	}
	s, _, _, ok := readEventStart(r)
	if ok {
		e.events.live.Store(s)
	}
	return s, ok
}

// EventLogWide reports whether the log keeps the events of other things
// than jobs (EventLogStartWide applied).
func (e *Engine) EventLogWide(r pebble.Reader) bool {
	if e.events.liveWide.Load() {
		return true
	}
	_, wide, _, _ := readEventStart(r)
	if wide {
		e.events.liveWide.Store(true)
	}
	return wide
}

// eventFloor is the sequence number at or below which ns's log holds
// nothing it will ever hold: the log's start, or what a trim or a wipe
// raised it to.
func eventFloor(r pebble.Reader, ns string, start uint64) uint64 {
	v, closer, err := r.Get(keys.EventFloor(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return start
	}
	must(err)
	defer closer.Close()
	return max(start, binary.BigEndian.Uint64(v))
}

// ReadEvents appends to out up to limit events of ns after seq after, in
// order. When events after it are gone (trimmed, wiped, or from before
// the log started), missed is true and reading resumed from the oldest
// event kept: the caller continues after skipTo.
func (e *Engine) ReadEvents(r pebble.Reader, ns string, after uint64, limit int, out []Event) (evs []Event, missed bool, skipTo uint64) {
	start, on := e.EventLogStart(r)
	if !on {
		return out, false, after
	}
	if f := eventFloor(r, ns, start); after < f {
		missed, after = true, f
	}
	x := newEventIter(r, ns)
	defer x.close()
	for ok := x.seekAfter(after); ok && len(out) < limit; ok = x.next() {
		var ev Event
		if !x.decode(&ev) {
			continue // written by nothing this version knows of; skipped rather than stopping every stream
		}
		out = append(out, ev)
	}
	return out, missed, after
}

// LatestEvent is the sequence number of ns's newest event, or its floor
// when it has none: a stream that starts now reads after it.
func (e *Engine) LatestEvent(r pebble.Reader, ns string) uint64 {
	start, on := e.EventLogStart(r)
	if !on {
		return 0
	}
	p := keys.EventPrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer func() { must(it.Close()) }()
	if it.Last() {
		seq, err := keys.ParseEvent(ns, it.Key())
		must(err)
		return seq + uint64(max(blockCount(it.Value()), 1)) - 1
	}
	return eventFloor(r, ns, start)
}

// EventTrimPoint is where the leader trims ns's log to keep it within ret
// at now: the newest sequence number to delete, and false when nothing
// need go. It reads at most step events from the oldest, for their age
// and, given the log's count (count, negative while the log is not
// counted), for the count's excess over ret.MaxCount, so a long backlog
// is trimmed over several rounds. Without a count it counts back from the
// newest at most ret.MaxCount keys.
func EventTrimPoint(r pebble.Reader, ns string, ret EventRetention, now int64, step int, count int64) (uint64, bool) {
	if count >= 0 {
		return eventTrimCounted(r, ns, ret, now, step, count)
	}
	x := newEventIter(r, ns)
	defer x.close()
	var through uint64
	found := false
	// By age: events are in the order of their entries' clocks.
	cutoff := now - int64(ret.MaxAge)
	n := 0
	for ok := x.first(); ok && n < step; ok = x.next() {
		var ev Event
		if x.decode(&ev) && ev.At >= cutoff {
			break
		}
		through, found = x.Seq, true
		n++
	}
	// By count: the MaxCount newest stay.
	if ret.MaxCount > 0 {
		it := x.it
		kept := 0
		for ok := it.Last(); ok; ok = it.Prev() {
			seq, err := keys.ParseEvent(ns, it.Key())
			must(err)
			c := blockCount(it.Value())
			if kept+c > ret.MaxCount {
				// the newest MaxCount-kept of this key's events stay
				if last := seq + uint64(c-(ret.MaxCount-kept)) - 1; last > through || !found {
					through, found = last, true
				}
				break
			}
			kept += c
		}
	}
	return through, found
}

// eventTrimCounted is EventTrimPoint of a counted log: one walk from the
// oldest event over those too old or past the count's excess, at most
// step of them.
func eventTrimCounted(r pebble.Reader, ns string, ret EventRetention, now int64, step int, count int64) (uint64, bool) {
	x := newEventIter(r, ns)
	defer x.close()
	excess := int64(0)
	if ret.MaxCount > 0 {
		excess = count - int64(ret.MaxCount)
	}
	cutoff := now - int64(ret.MaxAge)
	var through uint64
	found, old := false, true
	for ok, n := x.first(), int64(0); ok && n < int64(step); ok, n = x.next(), n+1 {
		if old {
			var ev Event
			old = !x.decode(&ev) || ev.At < cutoff
		}
		if !old && n >= excess {
			break
		}
		through, found = x.Seq, true
	}
	return through, found
}
