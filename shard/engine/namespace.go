package engine

import (
	"bytes"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// NamespacePurgeCmd is one step of removing everything a namespace holds
// on the shard (DELETE /api/v1/namespace). The proposer loops, passing
// each step's Phase and Next on, until a step says Done:
//
//   - phase 0 removes the namespace's jobs, each with every key that names
//     it and its queue's count (removeJob, as pruning does: nothing waiting
//     on them is settled, since it goes too), walking the job records from
//     After;
//   - phase 1 deletes what is left (the namespace's settings, queue records, schedules, batches,
//     unique locks, bulk records, indexes…) in ranges of at most
//     purgeStepKeys keys (Engine.purgeStep) from the start of the namespace, and only while
//     no job record is left: one enqueued meanwhile sends the purge back
//     to phase 0, so no index ever names a job that is gone. The step that
//     finds the namespace empty deletes its registry entry.
//
// Every step is a Raft entry of bounded work however large the namespace.
type NamespacePurgeCmd struct {
	NS    string `codec:"ns"`
	Phase uint8  `codec:"ph,omitempty"`
	After []byte `codec:"a,omitempty"` // phase 0: the first job key to look at
}

// PurgeStep is the result of a purge step.
type PurgeStep struct {
	Removed int // jobs (phase 0) or keys (phase 1) removed
	Phase   uint8
	Next    []byte
	Done    bool // the namespace holds nothing more
}

// purgeStepKeys bounds the keys one phase-1 step deletes.
const purgeStepKeys = 10000

func (e *Engine) applyNamespacePurge(tx *replica.Tx, c *NamespacePurgeCmd) (*PurgeStep, error) {
	jobs := keys.Job(c.NS, "")
	if c.Phase == 0 {
		lower := c.After
		if !bytes.HasPrefix(lower, jobs) {
			lower = jobs
		}
		out := &PurgeStep{}
		out.Removed, out.Next = e.dropRange(tx, c.NS, lower, keys.PrefixEnd(jobs), func(k []byte) (string, bool) {
			return string(k[len(jobs):]), len(k) == len(jobs)+keys.JobIDLen
		}, func(*job.Job) bool { return true }, e.removeJob)
		if out.Next == nil {
			out.Phase = 1
		}
		return out, nil
	}
	if k, ok := firstKey(tx, jobs, keys.PrefixEnd(jobs)); ok {
		return &PurgeStep{Phase: 0, Next: k}, nil // jobs came meanwhile: they go first
	}
	e.settleHeld(tx) // the step counts what earlier entries hold (held.go)
	p := keys.Namespace(c.NS)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	n, more := 0, false
	var last []byte
	for ok := it.First(); ok; ok = it.Next() {
		if n == e.purgeStep {
			more = true
			break
		}
		last = append(last[:0], it.Key()...)
		n++
	}
	must(it.Close())
	upper := keys.PrefixEnd(p)
	if more {
		upper = append(last, 0) // just past the last key looked at
	}
	if n > 0 {
		must(tx.DeleteRange(p, upper, nil))
		e.eventsDeleted(tx, c.NS, p, upper)
	}
	e.forgetRange(tx, c.NS, p, upper)
	out := &PurgeStep{Removed: n, Phase: 1}
	if !more {
		must(tx.Delete(keys.Registry(c.NS), nil))
		e.clearRestoreMark(tx, c.NS) // a restore it interrupted is over
		e.clearMovedIn(tx, c.NS)
		e.floors.forget(c.NS)
		out.Done = true
	}
	return out, nil
}

// firstKey returns the first key in [lower, upper) of r, if any.
func firstKey(r pebble.Reader, lower, upper []byte) ([]byte, bool) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	must(err)
	defer func() { must(it.Close()) }()
	if !it.First() {
		return nil, false
	}
	return append([]byte(nil), it.Key()...), true
}

// forgetRange drops what the caches hold of ns's keys in [lower, upper),
// which a purge step just deleted: queue records (a change to one earlier
// in the entry, not yet written, goes with it), the pending windows of
// ns's queues, its cached jobs and history buckets; and the encryption
// epoch moves when the range holds ns's record.
func (e *Engine) forgetRange(tx *replica.Tx, ns string, lower, upper []byte) {
	c := e.queues
	c.mu.Lock()
	for k := range c.recs {
		if k.ns != ns {
			continue
		}
		if qk := keys.Queue(ns, k.queue); bytes.Compare(qk, lower) >= 0 && bytes.Compare(qk, upper) < 0 {
			delete(c.recs, k)
			delete(c.dirty, k)
		}
	}
	c.mu.Unlock()
	for k := range e.heads {
		if k.ns == ns {
			delete(e.heads, k)
		}
	}
	e.jobs.dropNamespace(ns)
	if uk := keys.Unfinished(ns); bytes.Compare(uk, lower) >= 0 && bytes.Compare(uk, upper) < 0 {
		c.forgetUnfinished(ns)
	}
	for p := range e.keyFloors {
		if strings.HasPrefix(p, ns+"\x00") {
			delete(e.keyFloors, p)
		}
	}
	if nk := keys.NamespaceConfig(ns); bytes.Compare(nk, lower) >= 0 && bytes.Compare(nk, upper) < 0 {
		delete(e.nsConfigs, ns)
	}
	e.history.forgetRange(ns, lower, upper)
	if ek := keys.Encryption(ns); bytes.Compare(ek, lower) >= 0 && bytes.Compare(ek, upper) < 0 {
		e.encryptionChanged(tx)
	}
	delete(e.budgets, ns)
}
