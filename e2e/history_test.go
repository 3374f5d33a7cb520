package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQueueHistoryAndScaleThroughTheGateway runs real jobs through the
// gateway and reads them back from the queue's history and its scale
// signal; another tenant's key learns nothing of the queue, and bad
// input is named.
func TestQueueHistoryAndScaleThroughTheGateway(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	key := ct.OwnerKey
	api := shared.gateway + "/api/v1"
	start := time.Now().UTC()
	for range 5 {
		e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "hist", "max_retries": 0})
		require.Equal(t, 201, e.Status, string(e.Raw))
	}
	fetch := func() string {
		f := call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"hist"}, "worker_id": "w", "timeout": 5})
		require.Equal(t, 200, f.Status, string(f.Raw))
		return f.Body["job_id"].(string)
	}
	for range 2 {
		a := call(t, "POST", api+"/ack/"+fetch(), key, map[string]any{"worker_id": "w"})
		require.Equal(t, 200, a.Status, string(a.Raw))
	}
	f := call(t, "POST", api+"/fail/"+fetch(), key, map[string]any{"worker_id": "w", "error": "boom"})
	require.Equal(t, 200, f.Status, string(f.Raw))
	held := fetch() // one in flight, one pending

	from := start.Add(-time.Minute).Format(time.RFC3339)
	r := call(t, "GET", api+"/queues/hist/stats?step=1m&from="+from, key, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "1m", r.Body["step"])
	sum := map[string]float64{}
	for _, b := range r.Body["buckets"].([]any) {
		b := b.(map[string]any)
		for _, k := range []string{"enqueued", "completed", "failed", "dead"} {
			sum[k] += b[k].(float64)
		}
		sum["attempts"] += b["processing_time"].(map[string]any)["count"].(float64)
	}
	require.Equal(t, map[string]float64{"enqueued": 5, "completed": 2, "failed": 1, "dead": 1, "attempts": 3}, sum)
	h := call(t, "GET", api+"/queues/hist/stats?step=1h&from="+from, key, nil)
	require.Equal(t, 200, h.Status, string(h.Raw))
	var hourEnqueued float64
	for _, b := range h.Body["buckets"].([]any) {
		hourEnqueued += b.(map[string]any)["enqueued"].(float64)
	}
	require.Equal(t, 5.0, hourEnqueued, "the minutes roll up into their hour")

	s := call(t, "GET", api+"/queues/hist/scale", key, nil)
	require.Equal(t, 200, s.Status, string(s.Raw))
	require.Equal(t, 1.0, s.Body["backlog"])
	require.Equal(t, 1.0, s.Body["in_flight"])
	require.Equal(t, 2.0, s.Body["demand"])
	require.Equal(t, 200, call(t, "POST", api+"/ack/"+held, key, map[string]any{"worker_id": "w"}).Status)
	require.Equal(t, 200, call(t, "POST", api+"/ack/"+fetch(), key, map[string]any{"worker_id": "w"}).Status)
	s = call(t, "GET", api+"/queues/hist/scale", key, nil)
	require.Equal(t, 0.0, s.Body["demand"], "nothing pending or in flight: zero demand")

	// Another tenant's key: the queue does not exist for it.
	_, other := shared.tenant(t)
	for _, p := range []string{"/queues/hist/stats", "/queues/hist/scale"} {
		o := call(t, "GET", api+p, other.OwnerKey, nil)
		require.Equal(t, 404, o.Status, "%s: %s", p, o.Raw)
	}

	// Bad input is a 400 naming the field.
	for q, field := range map[string]string{
		"step=5m":        "step",
		"from=yesterday": "from",
		"to=soon":        "to",
		"from=" + start.Add(-72*time.Hour).Format(time.RFC3339):                                    "from", // longer than 1m keeps
		"from=" + start.Format(time.RFC3339) + "&to=" + start.Add(-time.Hour).Format(time.RFC3339): "to",
	} {
		b := call(t, "GET", api+"/queues/hist/stats?"+q, key, nil)
		require.Equal(t, 400, b.Status, "%s: %s", q, b.Raw)
		require.Equal(t, field, b.field(), q)
	}
}
