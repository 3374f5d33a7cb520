package engine

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Keyed fairness within a queue. A pending job with a fairness or
// concurrency key lies in the keyed pending index instead of the pending
// index, in a group per (priority, fairness key, concurrency key), FIFO
// within the group; the group keys (with their job counts) list the
// groups a fetch looks at. A queue whose Keyed count is zero never reads
// them: its fetch is the pending index's one seek, as before keys.
//
// A keyed queue's fetch takes the best priority that has a job it may
// hand out; at that priority the fairness keys take turns in a ring
// ordered by key ("" — the unkeyed jobs and the keyed ones without a
// fairness key — first), starting after the key the queue last served
// there (QueueRecord.Turns, replicated). A key with nothing it may hand
// out is passed over (work-conserving). Within a key the oldest job whose
// concurrency key is under the queue's key_concurrency wins. Everything a
// decision reads is Pebble state or the queue record: the same on every
// replica.

// KeyTurn is the fairness key a queue last served at a priority.
type KeyTurn struct {
	Prio uint8  `codec:"p"`
	Key  string `codec:"k"`
}

// lastServed is the fairness key q last served at prio, if any.
func (q *QueueRecord) lastServed(prio uint8) (string, bool) {
	for _, t := range q.Turns {
		if t.Prio == prio {
			return t.Key, true
		}
	}
	return "", false
}

// served records that q handed out a job of fairness key key at prio;
// Turns stays sorted by priority.
func (q *QueueRecord) served(prio uint8, key string) {
	for i := range q.Turns {
		switch {
		case q.Turns[i].Prio == prio:
			q.Turns[i].Key = key
			return
		case q.Turns[i].Prio > prio:
			q.Turns = append(q.Turns[:i], append([]KeyTurn{{prio, key}}, q.Turns[i:]...)...)
			return
		}
	}
	q.Turns = append(q.Turns, KeyTurn{prio, key})
}

// keyFloors holds, per group prefix, a key below which the group has no
// live job: the head a fetch last found. Like pendingHeads it is only a
// hint (a lower bound, in memory, FSM goroutine only) that lets a seek
// skip the tombstones of the jobs the group handed out.
type keyFloors map[string][]byte

func (f keyFloors) inserted(prefix string, k []byte) {
	if cur, ok := f[prefix]; ok && bytes.Compare(k, cur) < 0 {
		f[prefix] = append([]byte(nil), k...)
	}
}

// keyCount is the value of a keys.KeyActive key: a concurrency key's
// active and pending jobs in a queue (two uvarints; absent = none).
type keyCount struct{ active, pending int64 }

func readKeyCount(r pebble.Reader, k []byte) keyCount {
	v, closer, err := r.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return keyCount{}
	}
	must(err)
	defer closer.Close()
	a, n := binary.Uvarint(v)
	p, _ := binary.Uvarint(v[max(n, 0):])
	return keyCount{int64(a), int64(p)}
}

// blocked is how many of the key's pending jobs its cap holds back.
func (c keyCount) blocked(keyMax int64) int64 {
	if keyMax > 0 && c.active >= keyMax {
		return c.pending
	}
	return 0
}

// keyMoved counts one of j's concurrency key's jobs in or out of active
// and pending, and keeps the queue's Blocked count (pending jobs whose key
// is at its cap) exact, so a parked fetch is not told a queue is ready
// when every pending job is capped.
func (e *Engine) keyMoved(tx *replica.Tx, ns string, j *job.Job, dActive, dPending int64) {
	k := keys.KeyActive(ns, j.Queue, j.ConcurrencyKey())
	c := readKeyCount(tx, k)
	keyMax := e.queues.get(tx, ns, j.Queue).KeyMax
	before := c.blocked(keyMax)
	c.active, c.pending = max(c.active+dActive, 0), max(c.pending+dPending, 0)
	if c == (keyCount{}) {
		must(tx.Delete(k, nil))
	} else {
		must(tx.Set(k, binary.AppendUvarint(binary.AppendUvarint(nil, uint64(c.active)), uint64(c.pending)), nil))
	}
	if d := c.blocked(keyMax) - before; d != 0 {
		e.queues.update(tx, ns, j.Queue, func(q *QueueRecord) { q.Blocked += d })
	}
}

// recountBlocked sets queue's Blocked after its key_concurrency changed:
// one look at each of its concurrency keys.
func (e *Engine) recountBlocked(tx *replica.Tx, ns, queue string) {
	q := e.queues.get(tx, ns, queue)
	var n int64
	if q.KeyMax > 0 {
		p := keys.KeyActive(ns, queue, "")
		it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
		must(err)
		for ok := it.First(); ok; ok = it.Next() {
			a, m := binary.Uvarint(it.Value())
			pn, _ := binary.Uvarint(it.Value()[max(m, 0):])
			n += keyCount{int64(a), int64(pn)}.blocked(q.KeyMax)
		}
		must(it.Close())
	}
	if n != q.Blocked {
		e.queues.update(tx, ns, queue, func(q *QueueRecord) { q.Blocked = n })
	}
}

// addKeyed puts a pending keyed job in its group.
func (e *Engine) addKeyed(tx *replica.Tx, ns string, j *job.Job) {
	p := uint8(j.Priority)
	k := keys.KeyedPending(ns, j.Queue, p, j.FairnessKey(), j.ConcurrencyKey(), j.CreatedAt, j.ID)
	must(tx.Set(k, nil, nil))
	e.keyFloors.inserted(string(keys.KeyedPrefix(ns, j.Queue, p, j.FairnessKey(), j.ConcurrencyKey())), k)
	// The group key marks a group with jobs. It is written only when the
	// group starts and deleted when it empties: a key rewritten on every
	// job would pile up versions that every fetch's scan steps over.
	gk := keys.KeyedGroup(ns, j.Queue, p, j.FairnessKey(), j.ConcurrencyKey())
	if _, closer, err := tx.Get(gk); err == nil {
		closer.Close()
	} else if errors.Is(err, pebble.ErrNotFound) {
		must(tx.Set(gk, nil, nil))
	} else {
		must(err)
	}
	e.queues.update(tx, ns, j.Queue, func(q *QueueRecord) { q.Keyed++ })
	if j.ConcurrencyKey() != "" {
		e.keyMoved(tx, ns, j, 0, 1)
	}
}

// removeKeyed takes a pending keyed job out of its group.
func (e *Engine) removeKeyed(tx *replica.Tx, ns string, j *job.Job) {
	p := uint8(j.Priority)
	must(tx.Delete(keys.KeyedPending(ns, j.Queue, p, j.FairnessKey(), j.ConcurrencyKey(), j.CreatedAt, j.ID), nil))
	g := group{j.FairnessKey(), j.ConcurrencyKey()}
	if e.groupHead(tx, ns, j.Queue, p, g) == nil {
		must(tx.Delete(keys.KeyedGroup(ns, j.Queue, p, g.fkey, g.ckey), nil))
		delete(e.keyFloors, string(keys.KeyedPrefix(ns, j.Queue, p, g.fkey, g.ckey)))
	}
	e.queues.update(tx, ns, j.Queue, func(q *QueueRecord) { q.Keyed-- })
	if j.ConcurrencyKey() != "" {
		e.keyMoved(tx, ns, j, 0, -1)
	}
}

// keyedCandidate is the job a keyed queue would hand out next.
type keyedCandidate struct {
	key   []byte // its key in the keyed or the plain pending index
	prio  uint8
	at    int64
	fkey  string
	ckey  string // its group's concurrency key, in the keyed index
	plain bool   // in the plain index
}

// group is one (fairness key, concurrency key) group at a priority.
type group struct{ fkey, ckey string }

// pickKeyed returns the job a fetch would take from keyed queue q, or
// false when no pending job may be handed out (every key at its cap).
func (e *Engine) pickKeyed(tx *replica.Tx, ns, queue string, q *QueueRecord) (keyedCandidate, bool) {
	var plain keyedCandidate
	if k := e.heads.first(tx, ns, queue); k != nil {
		p, at, err := keys.PendingOrder(ns, queue, k)
		must(err)
		plain = keyedCandidate{key: k, prio: p, at: at, plain: true}
	}
	gq := keys.KeyedQueue(ns, keys.KindKeyedGroup, queue)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: gq, UpperBound: keys.PrefixEnd(gq)})
	must(err)
	defer func() { must(it.Close()) }()
	l := &levelWalk{e: e, tx: tx, it: it, gq: gq, ns: ns, queue: queue, q: q, full: map[string]bool{}}
	for ok := it.First(); ok; {
		prio := it.Key()[len(gq)]
		if plain.key != nil && prio > plain.prio {
			break
		}
		l.prio, l.plain = prio, nil
		if plain.key != nil && plain.prio == prio {
			l.plain = &plain
		}
		if c, found := l.pick(); found {
			return c, true
		}
		if prio == 255 {
			break
		}
		ok = it.SeekGE(append(gq[:len(gq):len(gq)], prio+1))
	}
	return plain, plain.key != nil
}

// levelWalk takes the fairness keys of one priority in turn.
type levelWalk struct {
	e         *Engine
	tx        *replica.Tx
	it        *pebble.Iterator // over the queue's group keys
	gq        []byte           // their prefix
	ns, queue string
	q         *QueueRecord
	full      map[string]bool // concurrency keys at their cap, per fetch
	prio      uint8
	plain     *keyedCandidate // the plain pending index's head at prio, if any (fairness key "")
	run       []group
}

// pick serves the first fairness key after the one last served at the
// priority that has a job it may hand out: from there to the end of the
// ring, then from its start ("" first) through the last served. Fairness
// keys hold no control characters, so last+0x01 sorts after all of its
// groups. Without caps it reads one key's groups and the next group key.
func (l *levelWalk) pick() (keyedCandidate, bool) {
	lp := append(l.gq[:len(l.gq):len(l.gq)], l.prio)
	last, set := l.q.lastServed(l.prio)
	if !set {
		return l.walk(lp, true, false, "")
	}
	after := append(append(lp[:len(lp):len(lp)], last...), 1)
	if c, found := l.walk(after, false, false, ""); found {
		return c, true
	}
	return l.walk(lp, true, true, last)
}

// walk evaluates the fairness keys in order from the group key from (the
// ring's start when fromStart), through upto when bounded, and returns
// the first key's job that may go.
func (l *levelWalk) walk(from []byte, fromStart, bounded bool, upto string) (keyedCandidate, bool) {
	l.run = l.run[:0]
	runKey, inRun := "", fromStart && l.plain != nil // "" has the plain index's jobs
	for ok := l.it.SeekGE(from); ok && l.it.Key()[len(l.gq)] == l.prio; ok = l.it.Next() {
		_, f, c, err := keys.ParseKeyedGroup(l.ns, l.queue, l.it.Key())
		must(err)
		if inRun && f != runKey {
			if cand, found := l.eval(runKey); found {
				return cand, true
			}
			l.run, inRun = l.run[:0], false
		}
		if bounded && f > upto {
			return keyedCandidate{}, false
		}
		runKey, inRun = f, true
		l.run = append(l.run, group{f, c})
	}
	if inRun {
		return l.eval(runKey)
	}
	return keyedCandidate{}, false
}

// eval is the oldest job of fairness key fkey (its groups in l.run, and
// the plain head for "") whose concurrency key is under its cap.
func (l *levelWalk) eval(fkey string) (keyedCandidate, bool) {
	var best keyedCandidate
	if fkey == "" && l.plain != nil {
		best = *l.plain
	}
	for _, g := range l.run {
		if !l.e.keyUnderCap(l.tx, l.ns, l.queue, l.q, g.ckey, l.full) {
			continue
		}
		k := l.e.groupHead(l.tx, l.ns, l.queue, l.prio, g)
		if k == nil {
			continue
		}
		at, _, err := keys.CreatedID(k)
		must(err)
		if best.key == nil || at < best.at || (at == best.at && bytes.Compare(k[len(k)-keys.JobIDLen:], best.key[len(best.key)-keys.JobIDLen:]) < 0) {
			best = keyedCandidate{key: k, prio: l.prio, at: at, ckey: g.ckey}
		}
	}
	if best.key == nil {
		return keyedCandidate{}, false
	}
	best.fkey = fkey
	return best, true
}

// keyUnderCap reports whether queue may hand out one more job of
// concurrency key ckey.
func (e *Engine) keyUnderCap(tx *replica.Tx, ns, queue string, q *QueueRecord, ckey string, full map[string]bool) bool {
	if ckey == "" || q.KeyMax <= 0 {
		return true
	}
	if f, ok := full[ckey]; ok {
		return !f
	}
	f := readKeyCount(tx, keys.KeyActive(ns, queue, ckey)).active >= q.KeyMax
	full[ckey] = f
	return !f
}

// groupHead is the first job of a group (nil if none), sought from the
// group's floor.
func (e *Engine) groupHead(tx *replica.Tx, ns, queue string, prio uint8, g group) []byte {
	p := keys.KeyedPrefix(ns, queue, prio, g.fkey, g.ckey)
	lo := p
	if f, ok := e.keyFloors[string(p)]; ok {
		lo = f
	}
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer func() { must(it.Close()) }()
	if !it.First() {
		return nil
	}
	k := append([]byte(nil), it.Key()...)
	e.keyFloors[string(p)] = k
	return k
}
