package replica

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/pebble"
)

// A group's batch is committed with its records in key order: Pebble
// inserts a batch into the memtable's skiplist record by record, and an
// insert next to the one before reuses its path, where one elsewhere
// searches from the top. Handlers write a job's keys of every kind in
// turn, so in the order written each insert lands far from the last.
// Measured on the effects a member applies: 6.0 → 4.0 µs of CPU a job
// (docs/BENCHMARKS.md, "The store's write path"). The leader sorts once;
// the entry carries the sorted batch, so every member inserts in order.
//
// Records of one key keep their order, so the batch does what it did;
// a batch holding a record whose place matters beyond its key (a range
// deletion, a range key, log data, a merge) is left as written.

// batchHeaderLen is a Pebble batch's header: its sequence number (8
// bytes) and its count of records (4).
const batchHeaderLen = 12

// sortRec is one record of a batch: where it lies in the batch's bytes,
// where its key does, and its bucket (below).
type sortRec struct {
	start, end int32
	key, klen  int32
	bucket     int32
}

// batchSorter sorts batches, keeping its scratch from one to the next.
type batchSorter struct {
	recs   []sortRec
	placed []sortRec
	first  [256]int32 // per first byte of a key: the record of the first such key, -1 none
	lcp    [256]int32 // per first byte: the prefix those keys share
	slot   []int32    // per bucket: its place among the batch's buckets, -1 none (reset after each batch)
	runs   []int
	tmp    []sortRec
	ids    []int32
	counts []int32
	next   []int32
}

// sorted returns b's records in key order in a new batch and closes b, or
// returns b when it is in order already or holds a record that must keep
// its place.
func (s *batchSorter) sorted(db *pebble.DB, b *pebble.Batch) *pebble.Batch {
	repr := s.sortedRepr(b.Repr())
	if repr == nil {
		return b
	}
	nb := db.NewBatch()
	if err := nb.SetRepr(repr); err != nil {
		panic("replica: sorted batch: " + err.Error())
	}
	b.Close()
	return nb
}

// sortedRepr returns a new slice holding repr's records in key order
// (records of one key in their order), or nil when repr is in order
// already or holds a record that must keep its place.
//
// Records are placed by bucket, then ordered within each: a key's bucket
// is its first byte and the byte after the prefix every key with that
// first byte shares (for the engine's keys, the namespace and then the
// kind of key), so buckets taken in order of those two bytes are in key
// order. Within a bucket records are mostly written in order already
// (job ids and times rise), which one comparison a record checks; a
// bucket that is not is sorted.
func (s *batchSorter) sortedRepr(repr []byte) []byte {
	if len(repr) < batchHeaderLen || len(repr) > 1<<31-1 {
		return nil
	}
	for i := range s.first {
		s.first[i] = -1
	}
	r, _ := pebble.ReadBatch(repr)
	recs := s.recs[:0]
	inOrder := true
	var last []byte
	for {
		start := len(repr) - len(r)
		kind, ukey, _, ok, err := r.Next()
		if err != nil {
			return nil
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete, pebble.InternalKeyKindDeleteSized:
		default:
			return nil
		}
		if len(recs) > 0 && inOrder && bytes.Compare(ukey, last) < 0 {
			inOrder = false
		}
		last = ukey
		// ukey is a slice of repr running to its end: where it starts
		// follows from the capacities.
		rec := sortRec{start: int32(start), end: int32(len(repr) - len(r)), key: int32(cap(repr) - cap(ukey)), klen: int32(len(ukey))}
		if rec.key <= rec.start || rec.key+rec.klen > rec.end {
			return nil
		}
		if len(ukey) > 0 {
			g := ukey[0]
			if f := s.first[g]; f < 0 {
				s.first[g], s.lcp[g] = int32(len(recs)), int32(len(ukey))
			} else if p := s.keyOf(repr, recs[f])[:s.lcp[g]]; !bytes.HasPrefix(ukey, p) {
				s.lcp[g] = int32(commonPrefix(p, ukey))
			}
		}
		recs = append(recs, rec)
	}
	s.recs = recs
	if inOrder {
		return nil
	}
	// Buckets: 0 for the empty key, else 1 + first byte × 257 + the byte
	// after the shared prefix + 1 (0 when the key is that prefix).
	if s.slot == nil {
		s.slot = make([]int32, 1+256*257)
		for i := range s.slot {
			s.slot[i] = -1
		}
	}
	s.ids = s.ids[:0]
	defer func() {
		for _, id := range s.ids {
			s.slot[id] = -1
		}
	}()
	for i := range recs {
		k := s.keyOf(repr, recs[i])
		var id int32
		if len(k) > 0 {
			g := k[0]
			id = 1 + int32(g)*257
			if p := s.lcp[g]; int(p) < len(k) {
				id += 1 + int32(k[p])
			}
		}
		recs[i].bucket = id
		if s.slot[id] < 0 {
			s.slot[id] = 0
			s.ids = append(s.ids, id)
		}
	}
	slices.Sort(s.ids)
	s.counts = slices.Grow(s.counts[:0], len(s.ids)+1)[:len(s.ids)+1]
	clear(s.counts)
	for i, id := range s.ids {
		s.slot[id] = int32(i)
	}
	for i := range recs {
		s.counts[s.slot[recs[i].bucket]+1]++
	}
	for i := 1; i < len(s.counts); i++ {
		s.counts[i] += s.counts[i-1]
	}
	placed := slices.Grow(s.placed[:0], len(recs))[:len(recs)]
	s.next = append(s.next[:0], s.counts[:len(s.ids)]...)
	for _, rec := range recs {
		sl := s.slot[rec.bucket]
		placed[s.next[sl]] = rec
		s.next[sl]++
	}
	s.placed = placed
	for i, id := range s.ids {
		skip := 0 // the bytes a bucket's keys share: its first byte, the prefix, the byte after
		if id > 0 {
			g := (id - 1) / 257
			skip = int(s.lcp[g])
			if (id-1)%257 > 0 {
				skip++
			}
		}
		s.sortBucket(repr, placed[s.counts[i]:s.counts[i+1]], skip)
	}
	out := make([]byte, 0, len(repr))
	out = append(out, repr[:batchHeaderLen]...)
	for _, rec := range placed {
		out = append(out, repr[rec.start:rec.end]...)
	}
	return out
}

// sortBucket puts one bucket's records, in batch order, in key order,
// records of one key keeping theirs. The keys share their first skip
// bytes. A bucket is a few runs in order (each command writes its jobs in
// order), so runs found are merged, in pairs, until one is left.
func (s *batchSorter) sortBucket(repr []byte, b []sortRec, skip int) {
	less := func(x, y sortRec) bool {
		return bytes.Compare(s.keyOf(repr, x)[skip:], s.keyOf(repr, y)[skip:]) < 0
	}
	runs := append(s.runs[:0], 0)
	for i := 1; i < len(b); i++ {
		if less(b[i], b[i-1]) {
			runs = append(runs, i)
		}
	}
	if len(runs) == 1 {
		s.runs = runs
		return
	}
	runs = append(runs, len(b))
	s.tmp = slices.Grow(s.tmp[:0], len(b))[:len(b)]
	src, dst := b, s.tmp
	for len(runs) > 2 {
		n := 0
		for i := 0; i+1 < len(runs); i += 2 {
			lo, mid, hi := runs[i], runs[i+1], runs[i+1]
			if i+2 < len(runs) {
				hi = runs[i+2]
			}
			x, y, o := lo, mid, lo
			for x < mid && y < hi {
				if less(src[y], src[x]) {
					dst[o] = src[y]
					y++
				} else {
					dst[o] = src[x]
					x++
				}
				o++
			}
			o += copy(dst[o:], src[x:mid])
			copy(dst[o:], src[y:hi])
			runs[n] = lo
			n++
		}
		runs = append(runs[:n], len(b))
		src, dst = dst, src
	}
	if &src[0] != &b[0] {
		copy(b, src)
	}
	s.runs = runs
}

func (s *batchSorter) keyOf(repr []byte, r sortRec) []byte {
	return repr[r.key : r.key+r.klen]
}

// commonPrefix is how many leading bytes a and b share.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
