package shard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func TestFetchBatchAndAckBatchHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var want []string
	for i := range 5 {
		want = append(want, b.enqueue(map[string]any{"queue": "bw", "payload": map[string]any{"i": i}}))
	}
	r := b.fetchBatch([]string{"bw"}, map[string]any{"max": 3, "lease_duration": 30})
	require.Equal(t, 200, r.Status, string(r.Raw))
	jobs := r.Body["jobs"].([]any)
	require.Len(t, jobs, 3)
	var got []string
	for i, x := range jobs {
		j := x.(map[string]any)
		got = append(got, j["job_id"].(string))
		require.Equal(t, "bw", j["queue"])
		require.Equal(t, map[string]any{"i": float64(i)}, j["payload"])
		require.Equal(t, float64(1), j["attempt"])
		require.Equal(t, float64(30), j["lease_duration"])
		require.Contains(t, j, "checkpoint")
		require.Equal(t, "active", b.job(got[i])["state"])
	}
	require.Equal(t, want[:3], got)

	a := b.call("POST", "/api/v1/ack/batch", map[string]any{"worker_id": "w1", "acks": []map[string]any{
		{"job_id": got[0], "result": map[string]any{"ok": true}},
		{"job_id": want[4]}, // still pending
		{"job_id": "job_nope"},
		{"job_id": got[1]},
	}})
	require.Equal(t, 200, a.Status, string(a.Raw))
	res := a.Body["results"].([]any)
	require.Len(t, res, 4)
	require.Equal(t, map[string]any{"job_id": got[0], "status": "completed"}, res[0])
	require.Equal(t, "lease_mismatch", res[1].(map[string]any)["error"].(map[string]any)["code"])
	require.Equal(t, "not_found", res[2].(map[string]any)["error"].(map[string]any)["code"])
	require.NotEmpty(t, res[2].(map[string]any)["error"].(map[string]any)["message"])
	require.Equal(t, map[string]any{"job_id": got[1], "status": "completed"}, res[3])
	d := b.job(got[0])
	require.Equal(t, "completed", d["state"])
	require.Equal(t, map[string]any{"ok": true}, d["result"])
	require.Equal(t, "pending", b.job(want[4])["state"])
	require.Equal(t, "active", b.job(got[2])["state"])

	// The batch fetch made the worker known, with the job it still holds.
	wr := b.call("GET", "/api/v1/workers", nil)
	require.Equal(t, 200, wr.Status, string(wr.Raw))
	ws := wr.Body["workers"].([]any)
	require.Len(t, ws, 1)
	require.Equal(t, "w1", ws[0].(map[string]any)["id"])
	require.Equal(t, []any{got[2]}, ws[0].(map[string]any)["active_job_ids"])

	// A single ack still works beside the batch route.
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+got[2], nil).Status)
}

func TestFetchBatchEmptyOnTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	start := time.Now()
	r := b.fetchBatch([]string{"nothing"}, map[string]any{"timeout": 0.2})
	require.Equal(t, 200, r.Status)
	require.JSONEq(t, `{"jobs":[]}`, string(r.Raw))
	require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
}

func TestFetchBatchLongPollIsWokenByEnqueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := make(chan resp, 1)
	go func() { done <- b.fetchBatch([]string{"wake"}, map[string]any{"timeout": 10, "max": 50}) }()
	eventually(t, 5*time.Second, func() bool {
		return b.srv.waiters.Parked(testNS, "wake") > 0
	}, "batch fetch parked")
	start := time.Now()
	id := b.enqueue(map[string]any{"queue": "wake"})
	r := <-done
	require.Equal(t, 200, r.Status, string(r.Raw))
	jobs := r.Body["jobs"].([]any)
	require.NotEmpty(t, jobs)
	require.Equal(t, id, jobs[0].(map[string]any)["job_id"])
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestBatchWorkRejectsBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	manyAcks := make([]map[string]any, wire.MaxAckBatch+1)
	for i := range manyAcks {
		manyAcks[i] = map[string]any{"job_id": fmt.Sprintf("job_%026d", i)}
	}
	bigResult := `{"acks":[{"job_id":"job_00000000000000000000000001","result":"` + strings.Repeat("x", wire.MaxPayloadBytes) + `"}]}`
	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		field      string
	}{
		{"max zero", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "max": 0}, 400, "max"},
		{"max too big", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "max": wire.MaxFetchBatch + 1}, 400, "max"},
		{"max not a number", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "max": "ten"}, 400, "max"},
		{"no queues", "/api/v1/fetch/batch", map[string]any{"max": 10}, 400, "queues"},
		{"bad lease", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "lease_duration": 0}, 400, "lease_duration"},
		{"unknown field", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "limit": 3}, 400, "limit"},
		{"no acks", "/api/v1/ack/batch", map[string]any{"acks": []any{}}, 400, "acks"},
		{"acks missing", "/api/v1/ack/batch", map[string]any{"worker_id": "w"}, 400, "acks"},
		{"too many acks", "/api/v1/ack/batch", map[string]any{"acks": manyAcks}, 400, "acks"},
		{"result too large", "/api/v1/ack/batch", bigResult, 413, "acks[0].result"},
		{"empty body", "/api/v1/ack/batch", "", 400, ""},
	} {
		r := b.call("POST", tc.path, tc.body)
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Raw)
		require.Equal(t, tc.field, errField(r), tc.name)
	}
	// Nothing was leased or settled by the refused calls.
	id := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 400, b.fetchBatch([]string{"q"}, map[string]any{"max": -1}).Status)
	none := b.fetchBatch([]string{"q"}, map[string]any{"max": 0}) // waits for news only
	require.Equal(t, 200, none.Status, string(none.Raw))
	require.Equal(t, []any{}, none.Body["jobs"])
	require.Equal(t, "pending", b.job(id)["state"])
}

func (b *bundle) fetchBatch(queues []string, extra map[string]any) resp {
	b.t.Helper()
	body := map[string]any{"queues": queues, "worker_id": "w1", "hostname": "host1", "timeout": 0}
	for k, v := range extra {
		body[k] = v
	}
	return b.call("POST", "/api/v1/fetch/batch", body)
}
