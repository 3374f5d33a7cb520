//go:build unix

package engine

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble"
)

// BenchmarkLifecycleWrites weighs what BenchmarkApplyLifecycleStoreCPU's
// lifecycle (enqueue, fetch, ack, a hundred at a time; "retried": with a
// failed first attempt, BenchmarkApplyRetriedLifecycleStoreCPU's) writes
// to Pebble a job, by operation kind and key kind: every key the memtable
// takes, and later a flush and compactions carry, costs CPU in proportion
// to its count and bytes. It logs the table (run with -v) and reports the
// totals.
func BenchmarkLifecycleWrites(b *testing.B) {
	b.Run("acked", func(b *testing.B) { lifecycleWrites(b, (*storeLifecycle).run) })
	b.Run("retried", func(b *testing.B) { lifecycleWrites(b, (*storeLifecycle).runRetried) })
}

func lifecycleWrites(b *testing.B, run func(*storeLifecycle, int)) {
	db, done := benchStore(b)
	defer done()
	lc := newStoreLifecycle(b, db, nil)
	type row struct {
		op, kind   string
		n, kvBytes int
	}
	rows := map[string]*row{}
	total := row{}
	lc.loc.SeeBatches(func(repr []byte) {
		r, _ := pebble.ReadBatch(repr)
		for {
			kind, k, v, ok, err := r.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				return
			}
			op := strings.ToLower(kind.String())
			name := op + " " + keyKindName(k)
			rw := rows[name]
			if rw == nil {
				rw = &row{op: op, kind: keyKindName(k)}
				rows[name] = rw
			}
			rw.n++
			rw.kvBytes += len(k) + len(v)
			total.n++
			total.kvBytes += len(k) + len(v)
		}
	})
	b.ResetTimer()
	run(lc, b.N)
	b.StopTimer()
	lc.loc.SeeBatches(nil)
	list := make([]*row, 0, len(rows))
	for _, rw := range rows {
		list = append(list, rw)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].kvBytes != list[j].kvBytes {
			return list[i].kvBytes > list[j].kvBytes
		}
		return list[i].op+list[i].kind < list[j].op+list[j].kind
	})
	var out strings.Builder
	fmt.Fprintf(&out, "\n%-12s %-26s %10s %12s\n", "op", "key kind", "keys/job", "k+v B/job")
	for _, rw := range list {
		fmt.Fprintf(&out, "%-12s %-26s %10.2f %12.1f\n", rw.op, rw.kind, float64(rw.n)/float64(b.N), float64(rw.kvBytes)/float64(b.N))
	}
	fmt.Fprintf(&out, "%-12s %-26s %10.2f %12.1f\n", "all", "", float64(total.n)/float64(b.N), float64(total.kvBytes)/float64(b.N))
	b.Log(out.String())
	b.ReportMetric(float64(total.n)/float64(b.N), "keys/job")
	b.ReportMetric(float64(total.kvBytes)/float64(b.N), "kv-B/job")
}

// keyKindName names a key's kind for BenchmarkLifecycleWrites: a
// namespace's keys by the byte after its separator, the shard-wide ones
// (01 …) by theirs, anything else by its first bytes.
func keyKindName(k []byte) string {
	switch {
	case len(k) > 1 && k[0] == 0x01:
		return fmt.Sprintf("shard-wide %q", k[1])
	case bytes.IndexByte(k, 0) > 0 && bytes.IndexByte(k, 0) < len(k)-1:
		return fmt.Sprintf("ns %q", k[bytes.IndexByte(k, 0)+1])
	}
	if len(k) > 8 {
		k = k[:8]
	}
	return fmt.Sprintf("other %q", k)
}
