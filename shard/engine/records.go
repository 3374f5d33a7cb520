package engine

import (
	"errors"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// Retention of batch and background bulk-operation records: once a batch
// has fired its callback, or an operation finished or was cancelled, its
// record enters the record prune index (keys.RecordPruneEntry) at that
// time plus the retention period (Options.Retention). The leader's sweep
// proposes RecordPrune for due entries; the handler deletes each record
// whose entry still exists, with its members. Records opened by older
// logs carry no Prunable mark and are kept, as they were then.

// RecordPruneCmd names due entries of the record prune index.
type RecordPruneCmd struct {
	NS    string       `codec:"ns"`
	Items []RecordItem `codec:"i"`
}

// RecordItem is one entry of the record prune index: when, and which
// record ("batch_…" or "bulk_…").
type RecordItem struct {
	At int64  `codec:"at"`
	ID string `codec:"id"`
}

// retainRecord puts a finished record in the prune index.
func (e *Engine) retainRecord(tx *replica.Tx, ns, id string, finishedAt int64, prunable bool) {
	if !prunable {
		return
	}
	at := finishedAt + int64(e.retention)
	must(tx.Set(keys.RecordPruneEntry(ns, at, id), nil, nil))
	e.floors.inserted(ns, keys.KindRecordPrune, at)
}

// applyRecordPrune deletes the records of the named entries that are due
// by the entry's clock and still in the index. It returns how many went.
func (e *Engine) applyRecordPrune(tx *replica.Tx, c *RecordPruneCmd) (int, error) {
	if restoring(tx, c.NS) {
		return 0, nil // proposed before a restore began
	}
	now := tx.Now.UnixNano()
	n := 0
	for _, it := range c.Items {
		k := keys.RecordPruneEntry(c.NS, it.At, it.ID)
		if it.At > now || !exists(tx, k) {
			continue
		}
		must(tx.Delete(k, nil))
		switch {
		case strings.HasPrefix(it.ID, "batch_"):
			must(tx.Delete(keys.Batch(c.NS, it.ID), nil))
			p := keys.BatchMembers(c.NS, it.ID)
			must(tx.DeleteRange(p, keys.PrefixEnd(p), nil))
		case strings.HasPrefix(it.ID, "bulk_"):
			must(tx.Delete(keys.BulkOp(c.NS, it.ID), nil))
		}
		n++
	}
	return n, nil
}

func exists(r pebble.Reader, k []byte) bool {
	_, closer, err := r.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	must(err)
	closer.Close()
	return true
}
