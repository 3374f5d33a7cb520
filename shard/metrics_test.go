package shard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
)

func TestMetricsCountJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Counters are process-wide: a namespace of its own per run keeps
	// repeated runs (-count) from adding up.
	ns := fmt.Sprintf("t_01hx0000000000000000000000/metrics-%d", time.Now().UnixNano()%1_000_000_000)
	call := func(method, path string, body any) resp { return b.call(method, path, body, NamespaceHeader, ns) }
	for i := 0; i < 3; i++ {
		require.Equal(t, 201, call("POST", "/api/v1/enqueue", map[string]any{"queue": "m", "max_retries": 0}).Status)
	}
	f := call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"m"}, "timeout": 0})
	require.Equal(t, 200, call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	f = call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"m"}, "timeout": 0})
	require.Equal(t, 200, call("POST", "/api/v1/fail/"+f.Body["job_id"].(string), map[string]string{"error": "x"}).Status)

	require.Equal(t, 3.0, testutil.ToFloat64(jobEvents.WithLabelValues(ns, "m", "enqueued")))
	require.Equal(t, 1.0, testutil.ToFloat64(jobEvents.WithLabelValues(ns, "m", "completed")))
	require.Equal(t, 1.0, testutil.ToFloat64(jobEvents.WithLabelValues(ns, "m", "failed")))
	require.Equal(t, 1.0, testutil.ToFloat64(jobEvents.WithLabelValues(ns, "m", "dead")))
	want := `
# HELP jobbie_jobs Jobs per namespace, queue and state, as applied on this node.
# TYPE jobbie_jobs gauge
`
	got, err := testutil.CollectAndFormat(engines, expfmt.TypeTextPlain, "jobbie_jobs")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(got), strings.TrimPrefix(want, "\n")))
	for _, line := range []string{
		`jobbie_jobs{namespace="` + ns + `",queue="m",state="pending"} 1`,
		`jobbie_jobs{namespace="` + ns + `",queue="m",state="completed"} 1`,
		`jobbie_jobs{namespace="` + ns + `",queue="m",state="dead"} 1`,
	} {
		require.Contains(t, string(got), line)
	}
}
