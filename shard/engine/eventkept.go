package engine

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// A namespace's event log (its events, floor, count and retention) is its
// shard's own: its sequence numbers are the shard's Raft indexes. Once
// EventLogStartKept has applied, these rules hold it so across restores
// and moves:
//
//   - a wipe of a namespace that had a log raises its floor past every
//     event so far (wipeLogged), so a reader resuming from before is told
//     it missed events: the restore's begin always did; now a restore's
//     abort, and the abort of a move that ended, do too (they deleted the
//     floor the begin raised, and a stream resuming from before read the
//     new events as if it had missed none);
//   - a restored or moved record never writes or deletes a key of the
//     log (keys.IsEvent, the rule backups are written by): a hand-made
//     backup carried its events, floor, count or retention into the
//     namespace;
//   - so the log is not the namespace's data: a restore or a move into a
//     namespace that holds nothing else begins (HasData), as it would
//     had the abort deleted the floor.
//
// They change what existing commands write, so they have their switch, a
// byte after the blocks marker in keys.EventLogStart (a no-op until the
// log writes blocks: the leader proposes it after the blocks start). A
// log written before replays as it first applied, and a node that does
// not know the command stops instead of diverging.
const (
	eventLogKeptMarker   = 1
	eventLogStartLenKept = eventLogStartLenBlocks + 1
)

// EventLogStartKept keeps each namespace's event log the shard's own
// across restores and moves (above); proposed after EventLogStartBlocks.
var EventLogStartKept = replica.Op[EventLogStartCmd, replica.None]{Type: 119, Name: "events.start.kept"}

// eventLogKept reports whether r's start record says the log is kept.
func eventLogKept(r pebble.Reader) bool {
	v, closer, err := r.Get(keys.EventLogStart())
	if err != nil {
		return false
	}
	defer closer.Close()
	return len(v) >= eventLogStartLenKept && v[eventLogStartLenBlocks] == eventLogKeptMarker
}

// EventLogKept reports whether the log is kept across restores and moves
// (EventLogStartKept applied), from any goroutine.
func (e *Engine) EventLogKept(r pebble.Reader) bool {
	if e.events.liveKept.Load() {
		return true
	}
	k := eventLogKept(r)
	if k {
		e.events.liveKept.Store(true)
	}
	return k
}

// applyEventLogStartKept keeps the log (a no-op until it writes blocks,
// and once it is kept).
func (e *Engine) applyEventLogStartKept(tx *replica.Tx, _ *EventLogStartCmd) (replica.None, error) {
	l := e.events
	if !l.on(tx) || !l.blocks || l.kept {
		return replica.None{}, nil
	}
	tx.MarkDirty()
	l.kept = true
	l.writeEventStart(tx)
	tx.AfterCommit(func() { l.liveKept.Store(true) })
	return replica.None{}, nil
}

// logKept reports whether the apply keeps the log (FSM goroutine).
func (e *Engine) logKept(tx *replica.Tx) bool { return e.events.on(tx) && e.events.kept }

// wipeLogged wipes ns (wipeNamespace) and, when it had a log, raises its
// floor past every event so far (wipeEvents).
func (e *Engine) wipeLogged(tx *replica.Tx, ns string) {
	hadLog := e.hasEventLog(tx, ns)
	e.wipeNamespace(tx, ns)
	if hadLog {
		e.wipeEvents(tx, ns)
	}
}

// wipeAborted is the wipe of a restore's or an ended move's abort: it
// keeps the log's floor once the log is kept.
func (e *Engine) wipeAborted(tx *replica.Tx, ns string) {
	if e.logKept(tx) {
		e.wipeLogged(tx, ns)
		return
	}
	e.wipeNamespace(tx, ns)
}

// holdsData reports whether a restore's begin finds ns holding data, in
// the store or held for earlier entries of the batch (held.go): its log
// counts as data until the log is kept.
func (e *Engine) holdsData(tx *replica.Tx, ns string) bool {
	kept := e.logKept(tx)
	if kept && HasData(tx, ns) {
		return true
	}
	if p := keys.Namespace(ns); !kept {
		if _, ok := firstKey(tx, p, keys.PrefixEnd(p)); ok {
			return true
		}
	}
	return e.holdsBefore(tx, ns, !kept)
}

// restoredKeyKept reports whether a restored or moved record's key
// (relative to the namespace) is written or deleted: not one of the log's
// once the log is kept.
func (e *Engine) restoredKeyKept(tx *replica.Tx, rel []byte) bool {
	return !keys.IsEvent(rel) || !e.logKept(tx)
}
