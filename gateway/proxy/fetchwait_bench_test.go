package proxy

import "testing"

// BenchmarkFetchWait is the gateway's read of every fetch's wait
// (docs/BENCHMARKS.md, "Single-call path").
func BenchmarkFetchWait(b *testing.B) {
	body := []byte(`{"queues":["w1"],"worker_id":"bench-worker-07","hostname":"host-1","timeout":30}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fetchWait(body); err != nil {
			b.Fatal(err)
		}
	}
}
