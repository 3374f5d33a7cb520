package engine

import "github.com/jobbie/jobbie/internal/replica"

// Held records: the queue records and unfinished counts (queueCache), the
// history buckets (historyCache) and the event blocks and counts
// (eventLog) an apply changes live in memory and are written once, when
// the batch of entries commits. A node applies entries one per batch when
// it keeps up, several when it catches up or replays its log, so a command
// that reads the stored keys themselves — counts them, or asks whether
// any is there — would see fewer keys on a node that grouped entries.
// Such a command calls settleHeld first, or, when it may refuse (a
// refused command writes nothing), asks holdsBefore too. The records its
// own entry changed stay held: they are held on every node alike, and so
// an entry applies as it always did on a node that applied it alone.

// settleHeld writes the records that entries before tx's, in the batch
// being applied, hold in memory: the store then holds what it does on a
// node that committed those entries in batches of their own.
func (e *Engine) settleHeld(tx *replica.Tx) {
	e.events.settle(tx)
	e.queues.writeHeld(tx, tx)
	e.history.writeHeld(tx, tx)
}

// holdsBefore reports whether entries before tx's, in the batch being
// applied, hold records of ns in memory: keys ns has on a node that
// committed those entries in batches of their own, which the store does
// not hold yet; the event log's only when withLog. It writes nothing.
func (e *Engine) holdsBefore(tx *replica.Tx, ns string, withLog bool) bool {
	return withLog && e.events.holdsBefore(tx, ns) || e.queues.holdsBefore(tx, ns) || e.history.holdsBefore(tx, ns)
}

func (l *eventLog) holdsBefore(tx *replica.Tx, ns string) bool {
	if l.held != tx {
		for i := range l.blocksHeld {
			if l.blocksHeld[i].ns == ns && l.blocksHeld[i].n > 0 {
				return true
			}
		}
	}
	c, ok := l.counts[ns]
	return ok && c.dirty && c.since != tx
}

func (c *queueCache) holdsBefore(tx *replica.Tx, ns string) bool {
	for k, h := range c.dirty {
		if k.ns == ns && h.since != tx {
			return true
		}
	}
	u, ok := c.unf[ns]
	return ok && u.dirty && u.since != tx
}

func (h *historyCache) holdsBefore(tx *replica.Tx, ns string) bool {
	for _, k := range h.dirty {
		if k.ns == ns && h.buckets[k].since != tx {
			return true
		}
	}
	return false
}
