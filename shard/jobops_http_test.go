package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

const unknownJob = "job_01HX0000000000000000000000"

func timelineEvents(d map[string]any) []string {
	var out []string
	for _, e := range d["timeline"].([]any) {
		out = append(out, e.(map[string]any)["event"].(string))
	}
	return out
}

func TestJobOpsHTTPErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q"})
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		code, field  string
	}{
		{"POST", "/api/v1/jobs/" + unknownJob + "/retry", nil, 404, "not_found", ""},
		{"POST", "/api/v1/jobs/nope/cancel", nil, 404, "not_found", ""},
		{"POST", "/api/v1/jobs/" + unknownJob + "/move", map[string]any{"queue": "x"}, 404, "not_found", ""},
		{"DELETE", "/api/v1/jobs/" + unknownJob, nil, 404, "not_found", ""},
		{"POST", "/api/v1/jobs/" + id + "/retry", nil, 409, "conflict", ""},
		{"POST", "/api/v1/jobs/" + id + "/move", map[string]any{}, 400, "bad_request", "queue"},
		{"POST", "/api/v1/jobs/" + id + "/move", map[string]any{"queue": "bad queue"}, 400, "bad_request", "queue"},
		{"POST", "/api/v1/jobs/" + id + "/move", map[string]any{"queue": "q"}, 400, "bad_request", "queue"},
		{"POST", "/api/v1/jobs/" + id + "/move", map[string]any{"queue": "x", "extra": 1}, 400, "bad_request", "extra"},
		{"POST", "/api/v1/jobs/" + id + "/move", "{", 400, "invalid_json", ""},
		{"POST", "/api/v1/jobs/" + id + "/cancel", map[string]any{"why": 1}, 400, "bad_request", "why"},
		{"GET", "/api/v1/dead?limit=1001", nil, 400, "bad_request", "limit"},
		{"GET", "/api/v1/dead?limit=0", nil, 400, "bad_request", "limit"},
		{"GET", "/api/v1/dead?limit=x", nil, 400, "bad_request", "limit"},
		{"GET", "/api/v1/dead?queue=bad%20queue", nil, 400, "bad_request", "queue"},
		{"GET", "/api/v1/dead?cursor=zzz", nil, 400, "bad_request", "cursor"},
	} {
		r := b.call(tc.method, tc.path, tc.body)
		require.Equal(t, tc.status, r.Status, "%s %s: %s", tc.method, tc.path, r.Raw)
		require.Equal(t, tc.code, errCode(r), "%s %s", tc.method, tc.path)
		require.Equal(t, tc.field, errField(r), "%s %s", tc.method, tc.path)
	}
	// 409 names the state.
	r := b.call("POST", "/api/v1/jobs/"+id+"/retry", nil)
	require.Contains(t, r.Body["error"].(map[string]any)["message"], "pending")
	// Another namespace does not see the job.
	other := "t_01hx0000000000000000000001/default"
	for _, p := range []string{"/retry", "/cancel"} {
		r := b.call("POST", "/api/v1/jobs/"+id+p, nil, wire.ShardNamespaceHeader, other)
		require.Equal(t, 404, r.Status)
	}
	require.Equal(t, 404, b.call("DELETE", "/api/v1/jobs/"+id, nil, wire.ShardNamespaceHeader, other).Status)
	require.Equal(t, 403, b.as(pkitest.Metrics).call("GET", "/api/v1/dead", nil).Status)
}

func TestCancelActiveReachesWorkerThroughHeartbeat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	r := b.call("POST", "/api/v1/jobs/"+id+"/cancel", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "cancelling", r.Body["status"])
	d := b.job(id)
	require.Equal(t, "active", d["state"])
	require.Equal(t, true, d["cancelling"])

	hb := b.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{"progress": map[string]any{"current": 5}}}})
	require.Equal(t, 200, hb.Status, string(hb.Raw))
	require.Equal(t, "cancel", hb.Body["jobs"].(map[string]any)[id].(map[string]any)["status"])

	a := b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1"})
	require.Equal(t, 200, a.Status, string(a.Raw))
	require.Equal(t, "cancelled", a.Body["status"])
	d = b.job(id)
	require.Equal(t, "cancelled", d["state"])
	require.NotNil(t, d["cancelled_at"])
	require.Equal(t, []string{"enqueued", "started", "cancel_requested", "progress", "cancelled"}, timelineEvents(d))

	// A pending job is cancelled at once and never fetched.
	p := b.enqueue(map[string]any{"queue": "q"})
	r = b.call("POST", "/api/v1/jobs/"+p+"/cancel", nil)
	require.Equal(t, "cancelled", r.Body["status"])
	require.Equal(t, 204, b.fetch([]string{"q"}, nil).Status)
	r = b.call("POST", "/api/v1/jobs/"+p+"/cancel", nil)
	require.Equal(t, 409, r.Status)
}

func TestCancellingJobWhoseLeaseExpiresIsCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 200, b.fetch([]string{"q"}, map[string]any{"lease_duration": 1}).Status)
	require.Equal(t, "cancelling", b.call("POST", "/api/v1/jobs/"+id+"/cancel", nil).Body["status"])
	eventually(t, 5*time.Second, func() bool { return b.job(id)["state"] == "cancelled" }, "cancelled on lease expiry")
	require.Equal(t, 204, b.fetch([]string{"q"}, nil).Status)
}

func TestRetryDeadJobResetsAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q", "max_retries": 0})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	f := b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": "boom"})
	require.Equal(t, "dead", f.Body["status"])
	r := b.call("POST", "/api/v1/jobs/"+id+"/retry", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "pending", r.Body["status"])
	d := b.job(id)
	require.Equal(t, "pending", d["state"])
	require.Equal(t, float64(0), d["attempt"])
	require.Len(t, d["errors"], 1)
	require.Nil(t, d["dead_reason"])
	got := b.fetch([]string{"q"}, nil)
	require.Equal(t, id, got.Body["job_id"])
	require.Equal(t, float64(1), got.Body["attempt"])
	require.Equal(t, []string{"enqueued", "started", "failed", "dead", "retried", "started"}, timelineEvents(b.job(id)))
}

func TestMoveJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "a"})
	r := b.call("POST", "/api/v1/jobs/"+id+"/move", map[string]any{"queue": "b"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "b", r.Body["queue"])
	require.Equal(t, 204, b.fetch([]string{"a"}, nil).Status)
	require.Equal(t, id, b.fetch([]string{"b"}, nil).Body["job_id"])
	r = b.call("POST", "/api/v1/jobs/"+id+"/move", map[string]any{"queue": "c"})
	require.Equal(t, 409, r.Status)
	require.Contains(t, r.Body["error"].(map[string]any)["message"], "active")
	d := b.job(id)
	require.Equal(t, "b", d["queue"])
	tl := d["timeline"].([]any)
	require.Equal(t, "a → b", tl[1].(map[string]any)["detail"])
}

func TestDeleteJobRemovesIndexes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q", "unique_key": "u"})
	act := b.enqueue(map[string]any{"queue": "busy"})
	require.Equal(t, 200, b.fetch([]string{"busy"}, nil).Status)
	r := b.call("DELETE", "/api/v1/jobs/"+act, nil)
	require.Equal(t, 409, r.Status, "an active job must be cancelled first")
	require.Equal(t, 204, b.call("DELETE", "/api/v1/jobs/"+id, nil).Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/jobs/"+id, nil).Status)
	require.Equal(t, 204, b.fetch([]string{"q"}, nil).Status, "nothing left to fetch")
	// The unique key is free again.
	again := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "unique_key": "u"})
	require.Equal(t, 201, again.Status)
	require.Equal(t, 404, b.call("DELETE", "/api/v1/jobs/"+id, nil).Status)
}

func TestRetentionPrunesFinishedJobs(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Retention = 300 * time.Millisecond })
	done := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+done, nil).Status)
	dead := b.enqueue(map[string]any{"queue": "q", "max_retries": 0})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/fail/"+dead, map[string]any{"error": "x"}).Status)
	require.Equal(t, "completed", b.job(done)["state"])
	eventually(t, 5*time.Second, func() bool { return b.call("GET", "/api/v1/jobs/"+done, nil).Status == 404 }, "completed job pruned")
	time.Sleep(400 * time.Millisecond)
	require.Equal(t, "dead", b.job(dead)["state"], "dead jobs are kept")
}

func TestListDeadPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var ids []string
	for i := range 25 {
		q := "a"
		if i%3 == 0 {
			q = "b"
		}
		id := b.enqueue(map[string]any{"queue": q, "max_retries": 0, "payload": map[string]any{"i": i}})
		require.Equal(t, 200, b.fetch([]string{q}, nil).Status)
		require.Equal(t, 200, b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": fmt.Sprint("e", i)}).Status)
		ids = append(ids, id)
	}
	page := func(query string) (got []string, cursor string) {
		r := b.call("GET", "/api/v1/dead?"+query, nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		for _, j := range r.Body["jobs"].([]any) {
			got = append(got, j.(map[string]any)["id"].(string))
		}
		if c, ok := r.Body["cursor"].(string); ok {
			require.Equal(t, true, r.Body["has_more"])
			cursor = c
		}
		return got, cursor
	}
	var all []string
	cursor := ""
	for n := 0; ; n++ {
		got, c := page("limit=7&cursor=" + cursor)
		all = append(all, got...)
		if c == "" {
			break
		}
		cursor = c
		require.Less(t, n, 10)
	}
	want := make([]string, len(ids))
	for i, id := range ids {
		want[len(ids)-1-i] = id
	}
	require.Equal(t, want, all, "newest first, nothing skipped or repeated")

	bq, c := page("queue=b&limit=1000")
	require.Empty(t, c)
	require.Len(t, bq, 9)
	for _, id := range bq {
		require.Equal(t, "b", b.job(id)["queue"])
	}
	r := b.call("GET", "/api/v1/dead?limit=1", nil)
	j := r.Body["jobs"].([]any)[0].(map[string]any)
	require.Equal(t, "e24", j["last_error"])
	require.Equal(t, "retries_exhausted", j["dead_reason"])
	// Retrying a dead job takes it off the list.
	require.Equal(t, 200, b.call("POST", "/api/v1/jobs/"+ids[24]+"/retry", nil).Status)
	got, _ := page("limit=1")
	require.Equal(t, ids[23], got[0])
}
