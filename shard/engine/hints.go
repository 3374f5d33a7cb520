package engine

import (
	"bytes"
	"math"
	"slices"
	"sort"
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

// pendingHeads holds, per namespace and queue, what the FSM knows of the
// head of the pending index: a floor (no live pending key is below it) and
// a window of the first live pending keys in order, refilled by one seek
// when it runs dry. Every insert and removal of a pending key passes
// through inserted and removed, which keep the window an exact prefix of
// the index. Only the FSM goroutine touches it.
type pendingHeads map[qkey]*queueHead

// headWindow is how many pending keys one seek reads ahead.
const headWindow = 64

type queueHead struct {
	floor  []byte
	window [][]byte
	// empty: the last seek found no live key and nothing was inserted
	// since, so the index is empty (a keyed queue asks on every fetch).
	empty bool
}

// qkey names a queue of a namespace in the engine's in-memory maps.
type qkey struct{ ns, queue string }

func headKey(ns, queue string) qkey { return qkey{ns, queue} }

func (h pendingHeads) get(ns, queue string) *queueHead {
	hk := headKey(ns, queue)
	qh, ok := h[hk]
	if !ok {
		qh = &queueHead{floor: keys.PendingQueue(ns, queue)}
		h[hk] = qh
	}
	return qh
}

// inserted records a new pending key k.
func (h pendingHeads) inserted(ns, queue string, k []byte) {
	qh := h.get(ns, queue)
	qh.empty = false
	if bytes.Compare(k, qh.floor) < 0 {
		qh.floor = append([]byte(nil), k...)
	}
	n := len(qh.window)
	if n == 0 || bytes.Compare(k, qh.window[n-1]) > 0 {
		return // beyond the window: the window is still a prefix
	}
	i := sort.Search(n, func(i int) bool { return bytes.Compare(qh.window[i], k) >= 0 })
	qh.window = slices.Insert(qh.window, i, append([]byte(nil), k...))
}

// removed records that pending key k is gone.
func (h pendingHeads) removed(ns, queue string, k []byte) {
	qh := h.get(ns, queue)
	n := len(qh.window)
	i := sort.Search(n, func(i int) bool { return bytes.Compare(qh.window[i], k) >= 0 })
	if i < n && bytes.Equal(qh.window[i], k) {
		qh.window = slices.Delete(qh.window, i, i+1)
		if i == 0 {
			// k was the first live key: nothing live is below it.
			qh.floor = append(qh.floor[:0], k...)
		}
	}
}

// first returns the first pending key of queue in r, or nil.
func (h pendingHeads) first(r pebble.Reader, ns, queue string) []byte {
	qh := h.get(ns, queue)
	if len(qh.window) > 0 {
		return qh.window[0]
	}
	if qh.empty {
		return nil
	}
	p := keys.PendingQueue(ns, queue)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: qh.floor, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	for ok := it.First(); ok && len(qh.window) < headWindow; ok = it.Next() {
		qh.window = append(qh.window, append([]byte(nil), it.Key()...))
	}
	if len(qh.window) == 0 {
		qh.empty = true
		return nil
	}
	return qh.window[0]
}

// timeFloors tracks, per namespace and time index, the lowest time
// inserted since the leader's sweep last looked. Applies raise nothing and
// only lower the floor; the sweep takes the floor and starts there.
type timeFloors struct {
	mu sync.Mutex
	m  map[floorKey]int64
}

// floorKey names a namespace's time index; a struct, so that the two
// timed inserts of a job's lifecycle build no string.
type floorKey struct {
	ns   string
	kind byte
}

func (f *timeFloors) inserted(ns string, kind byte, at int64) {
	k := floorKey{ns, kind}
	f.mu.Lock()
	if cur, ok := f.m[k]; !ok || at < cur {
		f.m[k] = at
	}
	f.mu.Unlock()
}

// forget drops ns's floors (a purged namespace has nothing to sweep).
func (f *timeFloors) forget(ns string) {
	f.mu.Lock()
	for k := range f.m {
		if k.ns == ns {
			delete(f.m, k)
		}
	}
	f.mu.Unlock()
}

// take returns the lowest time inserted since the last take (MaxInt64 if
// none) and starts a new round.
func (f *timeFloors) take(ns string, kind byte) int64 {
	k := floorKey{ns, kind}
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.m[k]
	if !ok {
		return math.MaxInt64
	}
	delete(f.m, k)
	return at
}
