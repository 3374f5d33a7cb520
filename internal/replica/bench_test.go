package replica

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
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

// BenchmarkProposeFast is BenchmarkPropose without the fsync (Config.Fast):
// the CPU cost of the proposal path, which moves less from run to run.
// Keys/1 is every caller on the default key, as the control plane and a
// shard's leader loops propose; Keys/64 gives each caller one of 64 keys,
// so admission takes turns among them.
func BenchmarkProposeFast(b *testing.B) {
	for _, keys := range []int{1, 64} {
		b.Run(fmt.Sprint("keys=", keys), func(b *testing.B) {
			c := &counter{}
			n, err := Open(Config{Dir: b.TempDir(), Bootstrap: true, Fast: true, HeartbeatTimeout: 100 * time.Millisecond,
				ElectionTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}, c.registry())
			require.NoError(b, err)
			defer n.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(b, n.WaitLeader(ctx))
			var caller atomic.Int64
			b.SetParallelism(32)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				if keys > 1 {
					ctx = WithFairKey(ctx, fmt.Sprint("ns", caller.Add(1)%int64(keys)))
				}
				for pb.Next() {
					if _, err := n.Propose(ctx, Command(cmdAdd, []byte{1})); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "proposals/s")
		})
	}
}

// BenchmarkAdmission is the admission queue alone: proposals added one at
// a time and taken in entries of 512, over 1 key or 64.
func BenchmarkAdmission(b *testing.B) {
	for _, keys := range []int{1, 64} {
		b.Run(fmt.Sprint("keys=", keys), func(b *testing.B) {
			q := newAdmission(Config{MaxPending: 4096, MaxPendingPerKey: 4096, AdmitWait: -1})
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprint("ns", i)
			}
			p := &proposal{cmd: make([]byte, 200)}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := q.add(ctx, names[i%keys], p, nil); err != nil {
					b.Fatal(err)
				}
				if i%512 == 511 {
					q.take(512, noBytes)
				}
			}
		})
	}
}
