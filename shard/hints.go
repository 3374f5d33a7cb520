package shard

import (
	"bytes"
	"math"
	"sync"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/keys"
)

// Jobs leave the pending index from its head and leave the time indexes
// as their times pass, so the start of each index fills with deletion
// tombstones that an iterator must step over. Without help every fetch and
// every sweep would walk all of them. The hints below remember where the
// live keys start, so reads seek past the tombstones. They are in-memory
// only, derived from applies, and never change a result: each is a lower
// bound below which no live key exists.

// pendingHeads holds, per namespace and queue, a key at or below the first
// pending key. Only the FSM goroutine touches it.
type pendingHeads map[string][]byte

func headKey(ns, queue string) string { return ns + "\x00" + queue }

// inserted lowers the hint when a pending key lands before it.
func (h pendingHeads) inserted(ns, queue string, k []byte) {
	hk := headKey(ns, queue)
	if cur, ok := h[hk]; ok && bytes.Compare(k, cur) < 0 {
		h[hk] = append(cur[:0], k...)
	}
}

// popped records that k, the first pending key, was removed.
func (h pendingHeads) popped(ns, queue string, k []byte) {
	h[headKey(ns, queue)] = append([]byte(nil), k...)
}

// first returns the first pending key of queue in r, or nil.
func (h pendingHeads) first(r pebble.Reader, ns, queue string) []byte {
	p := keys.PendingQueue(ns, queue)
	lower := p
	if hint, ok := h[headKey(ns, queue)]; ok {
		lower = hint
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	if it.First() {
		return append([]byte(nil), it.Key()...)
	}
	return nil
}

// timeFloors tracks, per namespace and time index, the lowest time
// inserted since the leader's sweep last looked. Applies raise nothing and
// only lower the floor; the sweep takes the floor and starts there.
type timeFloors struct {
	mu sync.Mutex
	m  map[string]int64
}

func floorKey(ns string, kind byte) string { return ns + "\x00" + string(kind) }

func (f *timeFloors) inserted(ns string, kind byte, at int64) {
	k := floorKey(ns, kind)
	f.mu.Lock()
	if cur, ok := f.m[k]; !ok || at < cur {
		f.m[k] = at
	}
	f.mu.Unlock()
}

// take returns the lowest time inserted since the last take (MaxInt64 if
// none) and starts a new round.
func (f *timeFloors) take(ns string, kind byte) int64 {
	k := floorKey(ns, kind)
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.m[k]
	if !ok {
		return math.MaxInt64
	}
	delete(f.m, k)
	return at
}

// reset forgets everything: after a snapshot restore, sweeps start over.
func (f *timeFloors) reset() {
	f.mu.Lock()
	f.m = map[string]int64{}
	f.mu.Unlock()
}
