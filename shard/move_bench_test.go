package shard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkMoveLarge (JOBBIE_MOVE_BENCH=1) times a live move of a
// namespace of 100,000 jobs (BenchmarkSearchMillion's mix) between two
// real single-node shards, driven as control drives it: the snapshot
// streamed and applied, a delta after 1% of the jobs changed (1,000 new
// jobs), then the fence, the last delta (nothing changed) and the end.
func BenchmarkMoveLarge(b *testing.B) {
	if os.Getenv("JOBBIE_MOVE_BENCH") == "" {
		b.Skip("set JOBBIE_MOVE_BENCH=1: it builds 100,000 jobs first")
	}
	const total = 100_000
	dir := b.TempDir()
	buildMillion(b, filepath.Join(dir, "src", "state"), total)
	src, dst := openBenchNode(b, filepath.Join(dir, "src"), true), openBenchNode(b, filepath.Join(dir, "dst"), true)
	defer src.Stop()
	defer dst.Stop()
	ctl := client(b, pkitest.Control, pki.ShardMember("s1"))
	gw := client(b, pkitest.Gateway, pki.ShardMember("s1"))
	const tok = "mov_bench"
	call := func(c *http.Client, n *Node, method, path string, body []byte) []byte {
		req, _ := http.NewRequest(method, "https://"+n.Addr()+path, bytes.NewReader(body))
		req.Header.Set(wire.ShardNamespaceHeader, testNS)
		req.Header.Set(wire.MoveTokenHeader, tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode/100 != 2 {
			b.Fatalf("%s %s: %d %v %.200s", method, path, resp.StatusCode, err, raw)
		}
		return raw
	}
	// round streams route from the source into the target's apply.
	round := func(what, route string) {
		start := time.Now()
		stream := call(ctl, src, "GET", "/internal/v1/move/"+route, nil)
		read := time.Since(start)
		var res struct{ Records, Deletes, Bytes int64 }
		_ = json.Unmarshal(call(ctl, dst, "POST", "/internal/v1/move/apply", stream), &res)
		b.Logf("%s: %d records and %d deletions, %d KiB: streamed in %s, applied in %s (%s in all)", what, res.Records, res.Deletes,
			res.Bytes>>10, read.Round(time.Millisecond), (time.Since(start) - read).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	for b.Loop() {
		call(ctl, dst, "POST", "/internal/v1/move/begin", nil)
		round("snapshot", "snapshot")
		jobs := make([]map[string]any, 1000)
		for i := range jobs {
			jobs[i] = map[string]any{"queue": "late", "payload": map[string]any{"i": i}}
		}
		body, _ := json.Marshal(map[string]any{"jobs": jobs})
		call(gw, src, "POST", "/api/v1/enqueue/batch", body)
		round(fmt.Sprintf("delta after %d new jobs", len(jobs)), "delta")
		start := time.Now()
		call(ctl, src, "POST", "/internal/v1/move/fence", []byte(`{"ttl_ms":30000}`))
		round("last delta under the fence", "delta")
		call(ctl, dst, "POST", "/internal/v1/move/end", nil)
		b.Logf("fence to end: %s", time.Since(start).Round(time.Millisecond))
		call(ctl, src, "POST", "/internal/v1/move/finish", []byte(`{"to_shard":"s2"}`))
	}
}
