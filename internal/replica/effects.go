package replica

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// Effects entries (Config.Effects): the leader runs an entry's commands
// before it proposes it and proposes what they wrote, so that every
// member applies a Pebble batch instead of running the handlers again.
//
// With one entry in Raft at a time, the leader's applied state when it
// forms the next entry is the state that entry applies to: the entry
// carries the applied index it was evaluated on (its base), and every
// member, the leader included (the log is the truth), applies its batch
// only on that same index. Every member has applied the same log up to
// there, so a mismatch can only mean an entry evaluated in one term and
// appended in a later one: every member refuses it alike, and nothing
// diverges. A mismatch within the term it was evaluated in is a bug that
// would make the state diverge, and stops the node. The evaluating node
// commits the batch it evaluated, kept open meanwhile, rather than decode
// the log's copy into another: the entry was encoded from that batch, so
// it holds the log's bytes.
//
// The state machine's caches follow the state only through its handlers.
// The leader's hold the evaluated entry's effects while it is in Raft, so
// they are dropped if the entry fails; a member that applies an effects
// entry it did not evaluate drops its own before its handlers next run
// (Registry.OnReset), and tells the views read outside the apply at once
// (Registry.OnEffectsApplied). The outcomes and the after-commit
// callbacks stay with the evaluating node and run once its entry applies.
//
// Handlers see Tx.Index = base+1: above every earlier entry's index and
// at most the entry's own, which is all the state machines ask of it
// (unique and increasing: event sequence numbers, audit keys).

// evaluation is the entry this node evaluated and proposed: what its
// proposers get once it applies.
type evaluation struct {
	token uint64
	b     *pebble.Batch // uncommitted: what the entry carries, committed when it applies here
	outs  []Outcome
	after []func()
}

// errStaleEntry answers the proposers of an entry evaluated in an earlier
// term than the one it was appended in: no member applied it, so sending
// it again is safe.
var errStaleEntry = ErrNotLeader

// othersReadEffects reports whether the group has a member besides this
// node and every other member (voter or not: each applies the log) is
// known to apply effects entries (Config.EffectsReader). The
// configuration is an atomic read in Raft, once an entry.
func (n *Node) othersReadEffects() bool {
	others := 0
	for _, s := range n.raft.GetConfiguration().Configuration().Servers {
		if string(s.ID) == n.cfg.NodeID {
			continue
		}
		if n.cfg.EffectsReader != nil && !n.cfg.EffectsReader(string(s.ID)) {
			return false
		}
		others++
	}
	return others > 0
}

// evaluate runs cmds, stamped now, as the entry that follows the applied
// state and returns the effects entry to propose, token naming it; nil
// when this node is not a leader ready in its term (IsLeader: it applied
// every entry of earlier terms), and its entry goes as commands.
func (n *Node) evaluate(now int64, cmds [][]byte, token uint64) []byte {
	f := n.fsm
	f.mu.Lock()
	defer f.mu.Unlock()
	term := n.lead.readyTerm.Load()
	if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
		return nil
	}
	return f.evalEffects(now, cmds, token, term)
}

// evalEffects is evaluate's work, under mu.
func (f *fsm) evalEffects(now int64, cmds [][]byte, token, term uint64) []byte {
	if f.own != nil { // an entry not yet resolved: never with one entry in Raft at a time
		f.dropOwn()
	}
	base := f.applied.Load()
	ev := f.evalGroup([]groupEntry{{index: base + 1, now: now, cmds: cmds}})
	ev.b = f.sorter.sorted(f.db, ev.b) // what every member inserts (sortbatch.go)
	// Snappy's format by s2's fastest encoder: on a group's real batches
	// it took 0.38x the time of snappy.Encode (s2's "better" encoder) for
	// entries 1 % larger (BenchmarkEffectsCodec). The entry copies it out
	// of the scratch buffer.
	f.zbuf = s2.EncodeSnappy(f.zbuf[:cap(f.zbuf)], ev.b.Repr())
	repr := f.zbuf
	// The batch stays open until the entry applies here or fails: the
	// leader commits it rather than decode the log's copy into another.
	f.own = &evaluation{token: token, b: ev.b, outs: ev.outs[0], after: ev.after}
	f.openEvals++
	entry := encodeEffects(&effectsEntry{now: ev.lastNow, base: base, index: base + 1, term: term, ncmds: ev.ncmds, token: token, repr: repr})
	if cap(f.zbuf) > 4<<20 { // an outsized entry's scratch is not kept
		f.zbuf = nil
	}
	return entry
}

// discard forgets the evaluation token names after its entry failed in
// Raft. If the entry commits anyway, this node applies it from the log as
// any member does.
func (f *fsm) discard(token uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.own != nil && f.own.token == token {
		f.dropOwn()
	}
}

// dropOwn forgets this node's evaluation, which will not apply as its own
// (under mu, f.own set): its batch is closed, and the caches, which hold
// its effects, are reset.
func (f *fsm) dropOwn() {
	f.closeOwn()
	f.reg.reset()
}

// closeOwn closes the kept batch of this node's evaluation, if any, and
// forgets it (under mu): every path that forgets an evaluation comes here.
func (f *fsm) closeOwn() {
	if f.own == nil {
		return
	}
	f.own.b.Close()
	f.own = nil
	f.openEvals--
}

// applyEffects applies one effects entry (under mu): its batch and the
// applied index in one commit, then the evaluating node's callbacks and
// outcomes, or, on any other member, a reset of the caches.
func (f *fsm) applyEffects(l *raft.Log, e *effectsEntry) any {
	if f.own != nil && f.own.token != e.token {
		f.dropOwn() // another leader's entry: this node's evaluation can no longer apply
	}
	if applied := f.applied.Load(); e.base != applied {
		if e.term == l.Term {
			panic(fmt.Sprintf("replica: entry %d was evaluated on applied index %d in term %d, but this member has applied %d: the state would diverge", l.Index, e.base, e.term, applied))
		}
		if f.own != nil {
			f.dropOwn()
		}
		return errStaleEntry
	}
	own := f.own
	var b *pebble.Batch
	if own != nil {
		// The entry's batch is the one this node evaluated and still holds:
		// the entry was encoded from it, under mu, and nothing has written
		// to it since, so its bytes are the log's.
		b, own.b = own.b, nil
		f.own = nil
		f.openEvals--
		if checkOwnEffects {
			mustMatchLog(l, e, b)
		}
	} else {
		b = f.decodeEffects(l, e)
	}
	now := max(e.now, f.lastNow)
	f.setApplied(b, l.Index, now)
	if err := b.Commit(pebble.NoSync); err != nil {
		panic(fmt.Sprintf("replica: commit entry %d: %v", l.Index, err))
	}
	b.Close()
	if own == nil {
		// Resetting the caches here, for every entry, cost a member about
		// a sixth of its CPU (a job cache's map made again each time):
		// nothing reads them before the next handler runs, which resets
		// them first. Views read elsewhere are dropped by effectsApplied,
		// after the commit, so that what they load again holds the entry.
		f.stale = true
		f.reg.effectsApplied()
	}
	f.lastNow = now
	f.applied.Store(l.Index)
	f.appliedMoved()
	if own == nil {
		return nil
	}
	for _, fn := range own.after {
		fn()
	}
	return own.outs
}

// decodeEffects makes a new batch of the log's copy of an entry's effects.
func (f *fsm) decodeEffects(l *raft.Log, e *effectsEntry) *pebble.Batch {
	repr, err := snappy.Decode(nil, e.repr)
	if err != nil {
		panic(fmt.Sprintf("replica: entry %d: effects: %v", l.Index, err))
	}
	b := f.db.NewBatch()
	if err := b.SetRepr(repr); err != nil {
		panic(fmt.Sprintf("replica: entry %d: effects: %v", l.Index, err))
	}
	return b
}

// checkOwnEffects has the evaluating node check, in race builds and
// tests, that the batch it commits holds the log's bytes: what every
// other member applies.
var checkOwnEffects = raceBuild

// mustMatchLog panics unless b holds what e carries.
func mustMatchLog(l *raft.Log, e *effectsEntry, b *pebble.Batch) {
	repr, err := snappy.Decode(nil, e.repr)
	if err != nil || !bytes.Equal(repr, b.Repr()) {
		panic(fmt.Sprintf("replica: entry %d: the evaluated batch is not the log's (%v)", l.Index, err))
	}
}
