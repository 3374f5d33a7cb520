package service

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/keys"
)

// Search reads candidates from indexes in creation order, (created, id),
// and merges them: the search index by state and queue, the pending index
// per queue and priority band, the tag index, or a short sorted list (the
// active jobs, a job named by its full id). Every source yields its jobs in
// the scan's direction and starts after the cursor, so a page seeks
// instead of skipping.

// cand is a candidate job: its creation time and id.
type cand struct {
	created int64
	id      string
}

// after reports whether a comes after b in the scan's direction.
func (a cand) after(b cand, desc bool) bool {
	if desc {
		return a.created < b.created || a.created == b.created && a.id < b.id
	}
	return a.created > b.created || a.created == b.created && a.id > b.id
}

type source interface {
	next() (cand, bool)
	close()
}

// scanRange is what every source of one scan shares: the direction, the
// creation-time window and the cursor position to start after.
type scanRange struct {
	desc   bool
	lo, hi *int64 // created window [lo, hi); nil = open
	from   *cand  // start strictly after this; nil = from the start
}

func (r scanRange) contains(c cand) bool {
	if r.lo != nil && c.created < *r.lo || r.hi != nil && c.created >= *r.hi {
		return false
	}
	return r.from == nil || c.after(*r.from, r.desc)
}

// indexSource walks one index prefix whose keys end in created and id.
type indexSource struct {
	it      *pebble.Iterator
	prefix  []byte
	r       scanRange
	started bool
}

func newIndexSource(rd pebble.Reader, prefix []byte, r scanRange) (*indexSource, error) {
	opts := &pebble.IterOptions{LowerBound: prefix, UpperBound: keys.PrefixEnd(prefix)}
	if r.lo != nil {
		opts.LowerBound = binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(*r.lo))
	}
	if r.hi != nil {
		opts.UpperBound = binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(*r.hi))
	}
	it, err := rd.NewIter(opts)
	if err != nil {
		return nil, err
	}
	return &indexSource{it: it, prefix: prefix, r: r}, nil
}

func (s *indexSource) next() (cand, bool) {
	var ok bool
	switch {
	case s.started && s.r.desc:
		ok = s.it.Prev()
	case s.started:
		ok = s.it.Next()
	case s.r.from != nil:
		seek := binary.BigEndian.AppendUint64(bytes.Clone(s.prefix), uint64(s.r.from.created))
		seek = append(seek, s.r.from.id...)
		if s.r.desc {
			ok = s.it.SeekLT(seek)
		} else if ok = s.it.SeekGE(seek); ok && bytes.Equal(s.it.Key(), seek) {
			ok = s.it.Next()
		}
	case s.r.desc:
		ok = s.it.Last()
	default:
		ok = s.it.First()
	}
	s.started = true
	if !ok {
		return cand{}, false
	}
	created, id, err := keys.CreatedID(s.it.Key())
	must(err)
	return cand{created, id}, true
}

func (s *indexSource) close() { _ = s.it.Close() }

// listSource yields a list sorted in the scan's direction.
type listSource struct {
	items []cand
	i     int
}

func newListSource(items []cand, r scanRange) *listSource {
	items = slices.DeleteFunc(items, func(c cand) bool { return !r.contains(c) })
	slices.SortFunc(items, func(a, b cand) int {
		if a == b {
			return 0
		}
		if b.after(a, r.desc) {
			return -1
		}
		return 1
	})
	return &listSource{items: items}
}

func (s *listSource) next() (cand, bool) {
	if s.i >= len(s.items) {
		return cand{}, false
	}
	s.i++
	return s.items[s.i-1], true
}

func (s *listSource) close() {}

// merged yields the candidates of several sources in the scan's order.
type merged struct {
	srcs  []source
	heads []cand
	h     mergeHeap
}

type mergeHeap struct {
	idx  []int
	m    *merged
	desc bool
}

func (h mergeHeap) Len() int { return len(h.idx) }
func (h mergeHeap) Less(i, j int) bool {
	return h.m.heads[h.idx[j]].after(h.m.heads[h.idx[i]], h.desc)
}
func (h mergeHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *mergeHeap) Push(x any)   { h.idx = append(h.idx, x.(int)) }
func (h *mergeHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

func newMerged(srcs []source, desc bool) *merged {
	m := &merged{srcs: srcs, heads: make([]cand, len(srcs))}
	m.h = mergeHeap{m: m, desc: desc}
	for i, s := range srcs {
		if c, ok := s.next(); ok {
			m.heads[i] = c
			m.h.idx = append(m.h.idx, i)
		}
	}
	heap.Init(&m.h)
	return m
}

func (m *merged) next() (cand, bool) {
	if m.h.Len() == 0 {
		return cand{}, false
	}
	i := m.h.idx[0]
	out := m.heads[i]
	if c, ok := m.srcs[i].next(); ok {
		m.heads[i] = c
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
	}
	return out, true
}

func (m *merged) close() {
	for _, s := range m.srcs {
		s.close()
	}
}
