package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

func TestMetricsCountJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Counters are process-wide: a namespace of its own per run keeps
	// repeated runs (-count) from adding up.
	ns := fmt.Sprintf("t_01hx0000000000000000000000/metrics-%d", time.Now().UnixNano()%1_000_000_000)
	call := func(method, path string, body any) resp {
		return b.call(method, path, body, wire.ShardNamespaceHeader, ns)
	}
	for i := 0; i < 3; i++ {
		require.Equal(t, 201, call("POST", "/api/v1/enqueue", map[string]any{"queue": "m", "max_retries": 0}).Status)
	}
	f := call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"m"}, "timeout": 0})
	require.Equal(t, 200, call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	f = call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"m"}, "timeout": 0})
	require.Equal(t, 200, call("POST", "/api/v1/fail/"+f.Body["job_id"].(string), map[string]string{"error": "x"}).Status)

	// Read what a scraper reads. Counters move when their entry commits,
	// before the write that made them is answered.
	require.Equal(t, 403, b.call("GET", "/metrics", nil).Status, "a gateway is not a scraper")
	r := b.as(pkitest.Metrics).call("GET", "/metrics", nil)
	require.Equal(t, 200, r.Status)
	got := string(r.Raw)
	for _, line := range []string{
		`jobbie_job_events_total{event="enqueued",namespace="` + ns + `",queue="m"} 3`,
		`jobbie_job_events_total{event="completed",namespace="` + ns + `",queue="m"} 1`,
		`jobbie_job_events_total{event="failed",namespace="` + ns + `",queue="m"} 1`,
		`jobbie_job_events_total{event="dead",namespace="` + ns + `",queue="m"} 1`,
		"# HELP jobbie_jobs Jobs per namespace, queue and state, as applied on this node.\n# TYPE jobbie_jobs gauge\n",
	} {
		require.Contains(t, got, line)
	}
	for _, line := range []string{
		`jobbie_jobs{namespace="` + ns + `",queue="m",state="pending"} 1`,
		`jobbie_jobs{namespace="` + ns + `",queue="m",state="completed"} 1`,
		`jobbie_jobs{namespace="` + ns + `",queue="m",state="dead"} 1`,
	} {
		require.Contains(t, got, line)
	}
}

// Nodes in one process that hold the same namespace and queue (tests; a
// namespace moving between two shards of one process) report one series
// with their sum, not two of the same labels, which would fail the whole
// scrape.
func TestMetricsOfNodesSharingAQueue(t *testing.T) {
	t.Parallel()
	a, b := setup(t), setup(t)
	ns := fmt.Sprintf("t_01hx0000000000000000000000/shared-%d", time.Now().UnixNano()%1_000_000_000)
	for _, n := range []*bundle{a, b} {
		r := n.call("POST", "/api/v1/enqueue", map[string]any{"queue": "twice"}, wire.ShardNamespaceHeader, ns)
		require.Equal(t, 201, r.Status, string(r.Raw))
	}
	r := a.as(pkitest.Metrics).call("GET", "/metrics", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), `jobbie_jobs{namespace="`+ns+`",queue="twice",state="pending"} 2`)
}
