package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// BenchmarkLifecycle enqueues and works b.N jobs through connect: 4
// producers enqueue one job per call while a worker of 16 fetch loops
// works them (one fetch and one ack per job, over HTTP), on an embedded
// node and on a fresh `jobbie dev` (JOBBIE_BIN, else a build of
// ./cmd/jobbie). Each sub-benchmark reports jobs/s and the CPU per job of
// everything it ran (cpu-µs/job): this process (load and, embedded, the
// node), and the jobbie dev process, whose own share is dev-cpu-µs/job. -count alternates the two. docs/BENCHMARKS.md
// has the command and the figures.
func BenchmarkLifecycle(b *testing.B) {
	b.Run("embedded", func(b *testing.B) {
		c, closeFn, err := connect(context.Background(), b.TempDir(), "", "", "")
		require.NoError(b, err)
		defer closeFn()
		lifecycle(b, c, nil)
	})
	b.Run("dev", func(b *testing.B) {
		url, key, proc := startDevProc(b)
		c, closeFn, err := connect(context.Background(), "", url, key, "")
		require.NoError(b, err)
		defer closeFn()
		lifecycle(b, c, proc)
	})
}

func lifecycle(b *testing.B, c *client.Client, server *os.Process) {
	const producers = 4
	queue := fmt.Sprintf("bench.%d", time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var worked atomic.Int64
	done := make(chan struct{})
	n := int64(b.N)
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{queue}, Concurrency: 16, Transport: client.TransportHTTP,
		FetchTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)},
		func(context.Context, *client.JobContext) (any, error) {
			if worked.Add(1) == n {
				close(done)
			}
			return nil, nil
		})
	ran := make(chan error, 1)
	selfCPU, serverCPU := processCPU(b), serverTime(b, server)
	b.ResetTimer()
	start := time.Now()
	go func() { ran <- w.Run(ctx) }()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < b.N; i += producers {
				if _, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: queue, Payload: map[string]int{"i": i}}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	self, srv := processCPU(b)-selfCPU, serverTime(b, server)-serverCPU
	cancel()
	require.NoError(b, <-ran)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64((self+srv).Microseconds())/float64(b.N), "cpu-µs/job")
	if server != nil {
		b.ReportMetric(float64(srv.Microseconds())/float64(b.N), "dev-cpu-µs/job")
	}
}

// processCPU is this process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverTime is p's user and system CPU time so far (/proc/<pid>/stat,
// in clock ticks of 10 ms); 0 for no process.
func serverTime(b *testing.B, p *os.Process) time.Duration {
	if p == nil {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	require.NoError(b, err)
	// The fields after the command's closing parenthesis: utime and
	// stime are the 12th and 13th of them.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, err := strconv.ParseInt(f[11], 10, 64)
	require.NoError(b, err)
	stime, err := strconv.ParseInt(f[12], 10, 64)
	require.NoError(b, err)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
