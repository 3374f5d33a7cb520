package engine

import "github.com/jobbie/jobbie/internal/replica"

// Held records: the queue records and unfinished counts (queueCache), the
// history buckets (historyCache) and the event blocks and counts
// (eventLog) an apply changes live in memory and are written once, when
// the batch of entries commits. A node applies entries one per batch when
// it keeps up, several when it catches up or replays its log, so a command
// that reads the stored keys themselves — counts them, or asks whether
// any is there — would see fewer keys on a node that grouped entries.
// Such a command calls settleHeld first. The records its own entry
// changed stay held: they are held on every node alike, and so an entry
// applies as it always did on a node that applied it alone.

// settleHeld writes the records that entries before tx's, in the batch
// being applied, hold in memory: the store then holds what it does on a
// node that committed those entries in batches of their own.
func (e *Engine) settleHeld(tx *replica.Tx) {
	e.events.settle(tx)
	e.queues.writeHeld(tx, tx)
	e.history.writeHeld(tx, tx)
}
