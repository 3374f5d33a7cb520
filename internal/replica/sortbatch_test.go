package replica

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble"
)

// record is one decoded record of a batch.
type record struct {
	kind  pebble.InternalKeyKind
	key   string
	value string
}

func records(t *testing.T, repr []byte) []record {
	t.Helper()
	var out []record
	r, n := pebble.ReadBatch(repr)
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		out = append(out, record{kind, string(k), string(v)})
	}
	if uint32(len(out)) != n {
		t.Fatalf("batch counts %d records and holds %d", n, len(out))
	}
	return out
}

// randomKey draws keys the way a state machine's look: long shared
// prefixes (a namespace), a kind byte, a short tail, and the edges (the
// empty key, a key that is another's prefix, 0x00 and 0xff bytes).
func randomKey(rng *rand.Rand) []byte {
	prefixes := []string{"", "\x00", "\x01", "\x01U", "ten_a/ns\x00", "ten_a/ns\x00j", "ten_a/ns\x00p", "ten_a/nt\x00", "ten_b/x\x00", "\xff"}
	k := []byte(prefixes[rng.IntN(len(prefixes))])
	alphabet := []byte{0x00, 0x01, 'a', 'b', 'j', 'p', 0xfe, 0xff}
	for range rng.IntN(5) {
		k = append(k, alphabet[rng.IntN(len(alphabet))])
	}
	return k
}

func TestSortedBatchKeepsEveryKeysRecordsInOrder(t *testing.T) {
	db := memDB(t)
	var s batchSorter
	sortedSeen := 0
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := db.NewBatch()
		for i := range 1 + rng.IntN(300) {
			k := randomKey(rng)
			var err error
			switch rng.IntN(4) {
			case 0, 1:
				err = b.Set(k, []byte(fmt.Sprintf("v%d", i)), nil)
			case 2:
				err = b.Delete(k, nil)
			case 3:
				err = b.SingleDelete(k, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(10) == 0 {
			if err := b.DeleteSized(randomKey(rng), 10, nil); err != nil {
				t.Fatal(err)
			}
		}
		in := b.Repr()
		out := s.sortedRepr(in)
		was := records(t, in)
		if out == nil {
			for i := 1; i < len(was); i++ {
				if was[i-1].key > was[i].key {
					t.Fatalf("seed %d: a batch out of order was left as written", seed)
				}
			}
			b.Close()
			continue
		}
		sortedSeen++
		if !bytes.Equal(out[:batchHeaderLen], in[:batchHeaderLen]) || len(out) != len(in) {
			t.Fatalf("seed %d: header or length changed", seed)
		}
		got := records(t, out)
		for i := 1; i < len(got); i++ {
			if got[i-1].key > got[i].key {
				t.Fatalf("seed %d: record %d (%q) comes after %q", seed, i, got[i].key, got[i-1].key)
			}
		}
		perKey := func(rs []record) map[string][]record {
			m := map[string][]record{}
			for _, r := range rs {
				m[r.key] = append(m[r.key], r)
			}
			return m
		}
		wantBy, gotBy := perKey(was), perKey(got)
		if len(wantBy) != len(gotBy) {
			t.Fatalf("seed %d: %d keys became %d", seed, len(wantBy), len(gotBy))
		}
		for k, w := range wantBy {
			if fmt.Sprint(w) != fmt.Sprint(gotBy[k]) {
				t.Fatalf("seed %d: key %q: records %v became %v", seed, k, w, gotBy[k])
			}
		}
		b.Close()
	}
	if sortedSeen < 400 {
		t.Fatalf("only %d of 500 random batches were sorted", sortedSeen)
	}
}

// A sorted batch leaves the store as the batch as written does, over a
// store that already holds versions of its keys.
func TestSortedBatchCommitsTheSameState(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	written, sorted := memDB(t), memDB(t)
	var s batchSorter
	for round := range 50 {
		ops := make([]func(b *pebble.Batch) error, 200)
		for i := range ops {
			k, v := randomKey(rng), []byte(fmt.Sprintf("r%d-%d", round, i))
			switch rng.IntN(3) {
			case 0, 1:
				ops[i] = func(b *pebble.Batch) error { return b.Set(k, v, nil) }
			default:
				ops[i] = func(b *pebble.Batch) error { return b.Delete(k, nil) }
			}
		}
		for _, db := range []*pebble.DB{written, sorted} {
			b := db.NewIndexedBatch()
			for _, op := range ops {
				if err := op(b); err != nil {
					t.Fatal(err)
				}
			}
			if db == sorted {
				b = s.sorted(db, b)
			}
			if err := b.Commit(pebble.NoSync); err != nil {
				t.Fatal(err)
			}
			b.Close()
		}
	}
	dump := func(db *pebble.DB) string {
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var buf bytes.Buffer
		for ok := it.First(); ok; ok = it.Next() {
			fmt.Fprintf(&buf, "%q=%q\n", it.Key(), it.Value())
		}
		return buf.String()
	}
	w, g := dump(written), dump(sorted)
	if w != g {
		t.Fatalf("states differ:\nas written:\n%s\nsorted:\n%s", w, g)
	}
	if w == "" {
		t.Fatal("nothing was written")
	}
}

// A batch whose records must keep their place is left as written: a range
// deletion covers only the records before it.
func TestSortedBatchLeavesRangeDeletionsAlone(t *testing.T) {
	db := memDB(t)
	var s batchSorter
	b := db.NewIndexedBatch()
	for _, op := range []func() error{
		func() error { return b.Set([]byte("b"), []byte("1"), nil) },
		func() error { return b.DeleteRange([]byte("a"), []byte("c"), nil) },
		func() error { return b.Set([]byte("a"), []byte("2"), nil) },
	} {
		if err := op(); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.sorted(db, b); got != b {
		t.Fatal("a batch with a range deletion was reordered")
	}
	b.Close()
	in := db.NewBatch()
	defer in.Close()
	for _, k := range []string{"a", "b", "b", "c"} {
		if err := in.Set([]byte(k), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if s.sortedRepr(in.Repr()) != nil {
		t.Fatal("a batch in order was copied")
	}
}

// BenchmarkSortBatch sorts a batch shaped like a group's under the
// stream: three commands of a hundred jobs each (an enqueue, a fetch, an
// ack), each writing its jobs' keys of every kind in turn, and the
// group's counters, in one namespace.
func BenchmarkSortBatch(b *testing.B) {
	db := memDB(b)
	ns := "ten_01JD0000000000000000000000/default\x00"
	key := func(kind byte, rest string) []byte { return append([]byte(ns+string(kind)), rest...) }
	batch := db.NewBatch()
	defer batch.Close()
	record := make([]byte, 240)
	for cmd, kinds := range []string{"jpS", "jlp", "jrSl"} {
		for i := range 100 {
			id := fmt.Sprintf("job_01JD%08d%014d", cmd, i)
			for _, k := range []byte(kinds) {
				if err := batch.Set(key(k, id), record, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := batch.Set([]byte("\x01Uusage"), record[:16], nil); err != nil {
			b.Fatal(err)
		}
		if err := batch.Set(key('t', "history"), record[:16], nil); err != nil {
			b.Fatal(err)
		}
	}
	repr := batch.Repr()
	var s batchSorter
	b.SetBytes(int64(len(repr)))
	b.ResetTimer()
	for range b.N {
		if s.sortedRepr(repr) == nil {
			b.Fatal("not sorted")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch.Count()), "ns/record")
}
