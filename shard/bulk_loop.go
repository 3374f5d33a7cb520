package shard

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/search"
)

// bulkLoop runs the background bulk operations while this node leads: one
// at a time, a step of at most bulkChunk jobs per Raft command. Everything
// it needs is in the operation's record, so a new leader resumes where the
// last committed step left off.
func (e *Engine) bulkLoop() {
	defer e.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		case <-e.bulkKick:
		}
		if !e.node.IsLeader() {
			continue
		}
		for _, ref := range e.runningOps() {
			if err := e.runBulkOp(ref.ns, ref.id); err != nil {
				e.cfg.Logger.Warn("shard bulk operation", "op", ref.id, "err", err)
				break
			}
		}
	}
}

// kickBulk wakes the loop for a new operation.
func (e *Engine) kickBulk() {
	select {
	case e.bulkKick <- struct{}{}:
	default:
	}
}

type opRef struct{ ns, id string }

// runningOps lists the operations still processing, oldest first per
// namespace.
func (e *Engine) runningOps() []opRef {
	db := e.node.DB()
	var out []opRef
	for _, ns := range e.namespaces() {
		p := keys.BulkOpPrefix(ns)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
		if err != nil {
			continue
		}
		for ok := it.First(); ok; ok = it.Next() {
			var op bulkOp
			if decode(it.Value(), &op) == nil && op.Status == bulkProcessing {
				out = append(out, opRef{ns, op.ID})
			}
		}
		_ = it.Close()
	}
	return out
}

// runBulkOp takes steps until the operation is finished or cancelled, this
// node stops leading, or the engine stops.
func (e *Engine) runBulkOp(ns, id string) error {
	for {
		select {
		case <-e.stop:
			return nil
		default:
		}
		op, err := readBulkOp(e.node.DB(), ns, id)
		if err != nil || op.Status != bulkProcessing {
			return err
		}
		f, err := search.ParseFilter(op.Filter)
		if err != nil {
			return err // validated at the start: cannot happen
		}
		from, err := decodeCand(op.Cursor)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := e.collectMatches(ctx, ns, f, from, e.cfg.BulkChunk)
		if err == nil {
			c := &bulkCmd{NS: ns, Action: op.Action, IDs: got.ids, Queue: op.Queue, Priority: op.Priority,
				Op: op.ID, From: op.Cursor, Next: encodeCand(got.next), Done: got.done}
			for _, s := range f.States {
				c.States = append(c.States, uint8(s))
			}
			_, err = e.propose(ctx, cmdBulkApply, c)
		}
		cancel()
		if err != nil {
			return err
		}
	}
}
