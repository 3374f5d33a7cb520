package replica

import (
	"context"
	"testing"
)

// BenchmarkPropose measures durable proposals from many concurrent callers,
// the shape of the shard's hot path.
func BenchmarkPropose(b *testing.B) {
	c := &counter{}
	n := open(b, b.TempDir(), c)
	defer n.Close()
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := n.Propose(context.Background(), Command(cmdAdd, []byte{1})); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "proposals/s")
}
