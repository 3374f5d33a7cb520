package shard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkSearchMillion measures search and bulk at scale: one namespace
// of JOBBIE_BENCH_JOBS jobs (default 1,000,000) over 20 queues, half of
// them completed, a tenth dead, 5% scheduled and the rest pending, each
// with a tenant tag of 100 values. The state is built by applying the
// engine's own commands straight to Pebble (no Raft, no fsync: minutes
// become seconds); then a real node opens it and every query runs
// through service.Search and service.Bulk, as the HTTP API calls them.
// `make bench-search` runs it.
func BenchmarkSearchMillion(b *testing.B) {
	total := 1_000_000
	if v := os.Getenv("JOBBIE_BENCH_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("JOBBIE_BENCH_JOBS=%q: want a number ≥ 1000", v)
		}
		total = n
	}
	dir := b.TempDir()
	start := time.Now()
	buildMillion(b, filepath.Join(dir, "state"), total)
	b.Logf("built %d jobs in %s", total, time.Since(start).Round(time.Second))

	n := openBenchNode(b, dir, false)
	defer n.Stop()
	e := n.Service()
	ctx := context.Background()

	for _, q := range []struct{ name, body string }{
		{"queue_state_dead_limit50", `{"queue":"q07","state":["dead"],"limit":50}`},
		{"queue_state_pending_limit50", `{"queue":"q07","state":["pending"],"limit":50}`},
		{"queue_state_page3_limit50", ``}, // filled below: a page reached by cursor
		{"tag_limit50", `{"tags":{"tenant":"t42"},"limit":50}`},
		{"tag_and_state_limit50", `{"tags":{"tenant":"t42"},"state":["completed"],"limit":50}`},
		{"payload_jq_over_100k_dead", `{"state":["dead"],"payload_jq":".amount == 123456","limit":50}`},
		{"payload_contains_over_100k_dead", `{"state":["dead"],"payload_contains":"cust_999999","limit":50}`},
	} {
		body := q.body
		if body == "" {
			body = pageBody(b, e, `{"queue":"q07","state":["completed"],"limit":50}`, 2)
		}
		b.Run(q.name, func(b *testing.B) {
			var res *service.SearchResult
			for b.Loop() {
				r, err := search.ParseRequest([]byte(body))
				if err != nil {
					b.Fatal(err)
				}
				if res, err = e.Search(ctx, testNS, tenancy.AllQueues(), r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Scanned), "scanned/op")
			b.ReportMetric(float64(len(res.Jobs)), "jobs/op")
			if res.Partial {
				b.Logf("%s: partial page (the scan budget ran out)", q.name)
			}
		})
	}

	b.Run("bulk_retry_all_dead", func(b *testing.B) {
		if b.N > 1 {
			b.Skip("runs once: it consumes the dead jobs")
		}
		start := time.Now()
		out, op, err := e.Bulk(ctx, testNS, tenancy.AllQueues(), &wire.BulkRequest{Filter: []byte(`{"state":["dead"]}`), Action: wire.BulkRetry})
		if err != nil {
			b.Fatal(err)
		}
		if op == nil { // few enough to run while the caller waits
			b.ReportMetric(float64(out.Affected), "retried")
			b.ReportMetric(float64(out.Affected)/time.Since(start).Seconds(), "jobs/s")
			return
		}
		for {
			v, err := e.BulkStatus(testNS, tenancy.AllQueues(), op.BulkOperationID)
			if err != nil {
				b.Fatal(err)
			}
			if v.Status != wire.BulkProcessing {
				b.ReportMetric(float64(v.Affected), "retried")
				b.ReportMetric(float64(v.Affected)/time.Since(start).Seconds(), "jobs/s")
				b.Logf("bulk retry: %d affected, %d skipped in %s", v.Affected, v.Skipped, time.Since(start).Round(time.Millisecond))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// pageBody returns the search body of page n (0-based) of body.
func pageBody(b *testing.B, e *service.Service, body string, n int) string {
	r, err := search.ParseRequest([]byte(body))
	if err != nil {
		b.Fatal(err)
	}
	for range n {
		res, err := e.Search(context.Background(), testNS, tenancy.AllQueues(), r)
		if err != nil || res.Cursor == "" {
			b.Fatalf("page: %v", err)
		}
		body = body[:len(body)-1] + `,"cursor":"` + res.Cursor + `"}`
		if r, err = search.ParseRequest([]byte(body)); err != nil {
			b.Fatal(err)
		}
	}
	return body
}

// millionBuilder applies engine commands straight to a Pebble store,
// through the replica's group apply without Raft.
type millionBuilder struct {
	b   *testing.B
	loc *replica.Local
	now time.Time
	n   int
}

func (m *millionBuilder) apply(cmds ...[]byte) []replica.Outcome {
	m.now = m.now.Add(time.Millisecond)
	return m.loc.Apply(m.now, cmds...)
}

var benchQueues = func() []string {
	q := make([]string, 20)
	for i := range q {
		q[i] = fmt.Sprintf("q%02d", i)
	}
	return q
}()

// enqueue adds n jobs spread over the queues and returns nothing: phases
// then lease them by queue order.
func (m *millionBuilder) enqueue(n int, maxRetries int, scheduledAt int64) {
	for n > 0 {
		k := min(n, 1000)
		c := &engine.EnqueueCmd{NS: testNS, Jobs: make([][]byte, k)}
		for i := range k {
			m.n++
			j := &job.Job{ID: "job_" + ulid.Make().String(), Queue: benchQueues[m.n%20], MaxRetries: maxRetries,
				Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute), ScheduledAt: scheduledAt,
				Payload: fmt.Appendf(nil, `{"customer_id":"cust_%d","amount":%d,"region":"%s","vip":%t}`,
					m.n%5000, m.n%1000, []string{"us-east", "eu-west", "ap-south"}[m.n%3], m.n%7 == 0),
				Tags: map[string]string{"tenant": "t" + strconv.Itoa(m.n%100)}}
			c.Jobs[i] = j.Encode()
		}
		m.apply(engine.Enqueue.Command(c))
		n -= k
	}
}

// work leases n pending jobs and acks them, or fails them when fail.
func (m *millionBuilder) work(n int, fail bool) {
	for n > 0 {
		var cmds [][]byte
		var ids []string
		for range 10 {
			res := m.apply(engine.FetchBatch.Command(&engine.FetchBatchCmd{Max: 100,
				Fetch: engine.FetchCmd{NS: testNS, Queues: benchQueues, WorkerID: "w", LeaseNs: int64(time.Hour)}}))
			for _, j := range res[0].Value.([]*job.Job) {
				ids = append(ids, j.ID)
			}
		}
		if len(ids) == 0 {
			m.b.Fatal("nothing left to lease")
		}
		if fail {
			for _, id := range ids {
				cmds = append(cmds, engine.Fail.Command(&engine.FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "SMTP timeout"}))
			}
		} else {
			items := make([]engine.AckBatchItem, len(ids))
			for i, id := range ids {
				items[i] = engine.AckBatchItem{ID: id}
			}
			cmds = append(cmds, engine.AckBatch.Command(&engine.AckBatchCmd{NS: testNS, WorkerID: "w", Items: items}))
		}
		m.apply(cmds...)
		n -= len(ids)
	}
}

func buildMillion(b *testing.B, path string, total int) {
	db, err := pebble.Open(path, &pebble.Options{MemTableSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	loc, err := replica.NewLocal(db, engine.New(engine.Options{}).Registry())
	if err != nil {
		b.Fatal(err)
	}
	m := &millionBuilder{b: b, loc: loc, now: time.Now().Add(-time.Hour)}
	completed, dead, scheduled := total/2, total/10, total/20
	m.enqueue(completed, 3, 0)
	m.work(completed, false)
	m.enqueue(dead, 0, 0)
	m.work(dead, true)
	m.enqueue(scheduled, 3, time.Now().Add(24*time.Hour).UnixNano())
	m.enqueue(total-completed-dead-scheduled, 3, 0)
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
}
