package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkEncryptedLifecycle is one job's enqueue (a 200-byte payload),
// fetch and ack (a 100-byte result) through a node's HTTP API by 16
// workers, with the namespace's encryption at rest off and on: the
// sealing of payload and result on the leader, the reads of the
// namespace's record and the opening of the payload for the fetch.
// cpu-µs/job is the process's CPU time per job (cpuTime).
func BenchmarkEncryptedLifecycle(b *testing.B) {
	b.Run("off", func(b *testing.B) { encryptedLifecycle(b, false) })
	b.Run("on", func(b *testing.B) { encryptedLifecycle(b, true) })
}

func encryptedLifecycle(b *testing.B, on bool) {
	k := envelope.NewKey()
	n, err := New(Config{DataDir: b.TempDir(), Bootstrap: true, TLS: nodeCreds(b, "n1"), HTTPAddr: "127.0.0.1:0", MasterKey: &k,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	if err := n.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = n.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		b.Fatal(err)
	}
	hc := client(b, pkitest.Gateway, pki.ShardMember("s1"))
	base := "https://" + n.Addr() + "/api/v1"
	call := func(method, path string, body any) []byte {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(wire.ShardNamespaceHeader, testNS)
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
	if on {
		call(http.MethodPut, "/encryption", wire.EncryptionRequest{Enabled: &on})
	}
	payload := []byte(fmt.Sprintf(`{"order":"%0180d"}`, 42))
	result := []byte(fmt.Sprintf(`{"ok":"%085d"}`, 7))
	var worker atomic.Int64
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.SetParallelism(8) // 16 workers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := worker.Add(1)
		queue, timeout := fmt.Sprint("bench-", w), 5.0
		for pb.Next() {
			call(http.MethodPost, "/enqueue", wire.EnqueueRequest{Queue: queue, Payload: payload})
			var j wire.FetchedJob
			if err := json.Unmarshal(call(http.MethodPost, "/fetch", wire.FetchRequest{Queues: []string{queue}, WorkerID: queue, Timeout: &timeout}), &j); err != nil {
				b.Fatal(err)
			}
			if !bytes.Equal(j.Payload, payload) {
				b.Fatalf("payload %s", j.Payload)
			}
			call(http.MethodPost, "/ack/"+j.JobID, wire.AckRequest{WorkerID: queue, LeaseToken: j.LeaseToken, Result: result})
		}
	})
	b.StopTimer()
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/job")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
