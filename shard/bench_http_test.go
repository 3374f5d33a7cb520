package shard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkHTTPLifecycle is one job's enqueue (with a traceparent), fetch
// and ack through a node's HTTP API, as a gateway calls it, by 16 workers
// at once: with tracing off, and on (every span sampled and exported over
// OTLP/HTTP to a receiver in this process that counts the requests and
// drops their bodies). cpu-µs/job is the process's CPU time (user and
// system) per job, which the fsync-bound wall time hides; exports/job
// says the spans were really sent.
func BenchmarkHTTPLifecycle(b *testing.B) {
	b.Run("off", func(b *testing.B) { httpLifecycle(b, nil) })
	b.Run("on", func(b *testing.B) {
		var exports atomic.Int64
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			exports.Add(1)
		}))
		defer rcv.Close()
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
		b.Setenv("OTEL_TRACES_SAMPLER", "always_on")
		httpLifecycle(b, &exports)
	})
}

func httpLifecycle(b *testing.B, exports *atomic.Int64) {
	n := openBenchNode(b, b.TempDir(), true)
	hc := client(b, pkitest.Gateway, pki.ShardMember("s1"))
	base := "https://" + n.Addr() + "/api/v1"
	call := func(path string, body any, tp string) []byte {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(wire.ShardNamespaceHeader, testNS)
		if tp != "" {
			req.Header.Set(wire.TraceParentHeader, tp)
		}
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			b.Fatalf("%s: %d %s", path, res.StatusCode, out)
		}
		return out
	}
	var worker atomic.Int64
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.SetParallelism(8) // 16 workers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := worker.Add(1)
		queue, timeout := fmt.Sprint("bench-", w), 5.0
		for i := 0; pb.Next(); i++ {
			tp := fmt.Sprintf("00-%016x%016x-%016x-01", w, i+1, i+1)
			call("/enqueue", wire.EnqueueRequest{Queue: queue, Payload: []byte(`{"n":1}`)}, tp)
			var j wire.FetchedJob
			if err := json.Unmarshal(call("/fetch", wire.FetchRequest{Queues: []string{queue}, WorkerID: queue, Timeout: &timeout}, ""), &j); err != nil {
				b.Fatal(err)
			}
			call("/ack/"+j.JobID, wire.AckRequest{WorkerID: queue, LeaseToken: j.LeaseToken}, "")
		}
	})
	b.StopTimer()
	cpu := cpuTime() - cpu0
	_ = n.Stop() // sends the spans still held
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/job")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	if exports != nil {
		if exports.Load() == 0 {
			b.Fatal("tracing on exported nothing")
		}
		b.ReportMetric(float64(exports.Load())/float64(b.N), "exports/job")
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
