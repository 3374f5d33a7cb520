package shard

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func (b *bundle) bulk(body map[string]any) resp {
	b.t.Helper()
	return b.call("POST", "/api/v1/jobs/bulk", body)
}

func TestBulkByIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := seedSearch(b)
	missing := "job_01HX00000000000000000000ZZ"
	ids := append(append([]string{}, w.dead...), w.completed[0], w.pending[0], missing, w.dead[0]) // a repeat counts once
	r := b.bulk(map[string]any{"job_ids": ids, "action": "retry"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 3.0, r.Body["affected"])
	require.Equal(t, 1.0, r.Body["skipped"], "a pending job is not retried")
	require.Equal(t, 1.0, r.Body["errors"])
	fails := r.Body["failures"].([]any)
	require.Len(t, fails, 1)
	require.Equal(t, missing, fails[0].(map[string]any)["job_id"])
	require.Contains(t, fails[0].(map[string]any)["error"], "not found")
	for _, id := range append(w.dead, w.completed[0]) {
		j := b.job(id)
		require.Equal(t, "pending", j["state"])
		require.Equal(t, 0.0, j["attempt"], "retry resets attempts")
	}

	// requeue keeps the attempt history; only dead jobs qualify.
	dead := b.enqueue(map[string]any{"queue": "r", "payload": map[string]any{}, "max_retries": 0})
	b.settle("r", dead, false)
	r = b.bulk(map[string]any{"job_ids": []string{dead, w.other[0]}, "action": "requeue"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 1.0, r.Body["affected"])
	require.Equal(t, 1.0, r.Body["skipped"])
	j := b.job(dead)
	require.Equal(t, "pending", j["state"])
	require.Equal(t, 1.0, j["attempt"])
	require.Len(t, j["errors"], 1)

	// change_priority re-sorts a pending job in its queue.
	r = b.bulk(map[string]any{"job_ids": []string{w.other[3]}, "action": "change_priority", "priority": "critical"})
	require.Equal(t, 1.0, r.Body["affected"], string(r.Raw))
	f := b.fetch([]string{"b"}, nil)
	require.Equal(t, w.other[3], f.Body["job_id"], "the critical job is fetched first")
	r = b.bulk(map[string]any{"job_ids": []string{w.other[0]}, "action": "change_priority", "priority": "normal"})
	require.Equal(t, 1.0, r.Body["skipped"], "already normal")

	// move, cancel, delete.
	r = b.bulk(map[string]any{"job_ids": []string{w.other[1], w.active}, "action": "move", "move_to_queue": "moved"})
	require.Equal(t, 1.0, r.Body["affected"], string(r.Raw))
	require.Equal(t, 1.0, r.Body["skipped"], "an active job does not move")
	require.Equal(t, "moved", b.job(w.other[1])["queue"])
	r = b.bulk(map[string]any{"job_ids": []string{w.other[2], w.completed[1]}, "action": "cancel"})
	require.Equal(t, 1.0, r.Body["affected"])
	require.Equal(t, 1.0, r.Body["skipped"])
	require.Equal(t, "cancelled", b.job(w.other[2])["state"])
	r = b.bulk(map[string]any{"job_ids": []string{w.other[2], w.completed[1]}, "action": "delete"})
	require.Equal(t, 2.0, r.Body["affected"])
	require.Equal(t, 404, b.call("GET", "/api/v1/jobs/"+w.other[2], nil).Status)
	ids2, _ := b.search(map[string]any{"job_id_prefix": w.completed[1]})
	require.Empty(t, ids2, "a deleted job leaves the indexes")
}

func TestBulkByFilter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := seedSearch(b)
	r := b.bulk(map[string]any{"filter": map[string]any{"queue": "a", "state": []string{"pending"}, "payload_jq": ".amount >= 100"},
		"action": "move", "move_to_queue": "big"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 3.0, r.Body["affected"])
	require.Equal(t, 0.0, r.Body["skipped"])
	ids, _ := b.search(map[string]any{"queue": "big", "order": "asc"})
	require.Equal(t, w.pending[2:], ids)

	r = b.bulk(map[string]any{"filter": map[string]any{"state": []string{"dead"}, "error_contains": "SMTP"}, "action": "retry"})
	require.Equal(t, 2.0, r.Body["affected"], string(r.Raw))
	ids, _ = b.search(map[string]any{"state": []string{"dead"}})
	require.Empty(t, ids)

	r = b.bulk(map[string]any{"filter": map[string]any{"tags": map[string]string{"tenant": "zen"}}, "action": "change_priority", "priority": "critical"})
	require.Equal(t, 2.0, r.Body["affected"], string(r.Raw))
	ids, _ = b.search(map[string]any{"priority": "critical", "order": "asc"})
	require.Equal(t, []string{w.pending[1], w.pending[2], w.pending[3]}, ids)
}

func TestBulkBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q", "payload": map[string]any{}})
	many := make([]string, wire.MaxBulkIDs+1)
	for i := range many {
		many[i] = id
	}
	cases := []struct {
		body  any
		field string
	}{
		{map[string]any{"job_ids": []string{id}}, "action"},
		{map[string]any{"job_ids": []string{id}, "action": "explode"}, "action"},
		{map[string]any{"action": "retry"}, "job_ids"},
		{map[string]any{"job_ids": []string{id}, "filter": map[string]any{"queue": "q"}, "action": "retry"}, "filter"},
		{map[string]any{"job_ids": []string{"nope"}, "action": "retry"}, "job_ids[0]"},
		{map[string]any{"job_ids": many, "action": "retry"}, "job_ids"},
		{map[string]any{"job_ids": []string{id}, "action": "move"}, "move_to_queue"},
		{map[string]any{"job_ids": []string{id}, "action": "move", "move_to_queue": "bad queue!"}, "move_to_queue"},
		{map[string]any{"job_ids": []string{id}, "action": "retry", "move_to_queue": "x"}, "move_to_queue"},
		{map[string]any{"job_ids": []string{id}, "action": "change_priority"}, "priority"},
		{map[string]any{"job_ids": []string{id}, "action": "change_priority", "priority": "urgent"}, "priority"},
		{map[string]any{"job_ids": []string{id}, "action": "retry", "priority": "high"}, "priority"},
		{map[string]any{"filter": map[string]any{}, "action": "delete"}, "filter"},
		{map[string]any{"filter": map[string]any{"state": []string{"gone"}}, "action": "delete"}, "filter.state"},
		{map[string]any{"filter": map[string]any{"payload_jq": "env"}, "action": "delete"}, "payload_jq"},
		{map[string]any{"job_ids": []string{id}, "action": "retry", "dry_run": true}, "dry_run"},
	}
	for _, tc := range cases {
		r := b.call("POST", "/api/v1/jobs/bulk", tc.body)
		require.Equal(t, 400, r.Status, "%v: %s", tc.body, r.Raw)
		require.Contains(t, string(r.Raw), tc.field, "%v", tc.body)
	}
	require.Equal(t, "pending", b.job(id)["state"], "bad input changes nothing")
	require.Equal(t, 404, b.call("GET", "/api/v1/bulk/bulk_nope", nil).Status)
	require.Equal(t, 404, b.call("DELETE", "/api/v1/bulk/bulk_nope", nil).Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/bulk/bulk_nope/progress", nil).Status)
}

// readProgress reads a bulk progress stream to its done event and returns
// the events' data.
func readProgress(t *testing.T, b *bundle, path string) []map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", b.url+path, nil)
	require.NoError(t, err)
	b.setHeaders(req)
	res, err := b.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var out []map[string]any
	sc := bufio.NewScanner(res.Body)
	ev := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m))
			m["event"] = ev
			out = append(out, m)
			if ev == "done" {
				return out
			}
		}
	}
	t.Fatal("progress stream ended without done")
	return nil
}

func enqueueMany(b *bundle, queue string, n int) []string {
	var ids []string
	for n > 0 {
		k := min(n, 500)
		jobs := make([]map[string]any, k)
		for i := range jobs {
			jobs[i] = map[string]any{"queue": queue, "payload": map[string]any{"i": len(ids) + i}}
		}
		r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs})
		require.Equal(b.t, 201, r.Status, string(r.Raw))
		for _, j := range r.Body["jobs"].([]any) {
			ids = append(ids, j.(map[string]any)["job_id"].(string))
		}
		n -= k
	}
	return ids
}

func TestBulkInBackground(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.BulkSyncMax, c.BulkChunk = 50, 20 })
	ids := enqueueMany(b, "src", 300)
	r := b.bulk(map[string]any{"filter": map[string]any{"queue": "src", "state": []string{"pending"}}, "action": "move", "move_to_queue": "dst"})
	require.Equal(t, 202, r.Status, string(r.Raw))
	op := r.Body["bulk_operation_id"].(string)
	require.True(t, strings.HasPrefix(op, "bulk_"))
	require.Equal(t, "processing", r.Body["status"])
	require.Equal(t, 300.0, r.Body["estimated_total"])
	require.Equal(t, "/api/v1/bulk/"+op+"/progress", r.Body["progress_url"])

	evs := readProgress(t, b, "/api/v1/bulk/"+op+"/progress")
	last := evs[len(evs)-1]
	require.Equal(t, "done", last["event"])
	require.Equal(t, "completed", last["status"])
	require.Equal(t, 300.0, last["affected"])
	require.Equal(t, 300.0, last["processed"])
	require.Equal(t, 0.0, last["skipped"])
	require.NotNil(t, last["finished_at"])
	s := b.call("GET", "/api/v1/bulk/"+op, nil)
	require.Equal(t, "completed", s.Body["status"])
	got := b.searchAll(map[string]any{"queue": "dst", "order": "asc", "limit": 1000})
	require.Equal(t, ids, got)

	// Cancel stops an operation between steps.
	enqueueMany(b, "slow", 400)
	r = b.bulk(map[string]any{"filter": map[string]any{"queue": "slow", "payload_contains": "i"}, "action": "change_priority", "priority": "high"})
	require.Equal(t, 202, r.Status, string(r.Raw))
	op = r.Body["bulk_operation_id"].(string)
	c := b.call("DELETE", "/api/v1/bulk/"+op, nil)
	require.Equal(t, 200, c.Status, string(c.Raw))
	require.Contains(t, []any{"cancelled", "completed"}, c.Body["status"])
	if c.Body["status"] == "cancelled" {
		time.Sleep(50 * time.Millisecond) // a step in flight is refused once cancelled
		s = b.call("GET", "/api/v1/bulk/"+op, nil)
		require.Equal(t, "cancelled", s.Body["status"])
		require.Less(t, s.Body["processed"].(float64), 400.0)
	}
}

func TestBulkResumesAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := func(c *Config) { c.BulkSyncMax, c.BulkChunk = 10, 5 }
	b := start(t, dir, opts)
	ids := enqueueMany(b, "src", 400)
	r := b.bulk(map[string]any{"filter": map[string]any{"queue": "src"}, "action": "move", "move_to_queue": "dst"})
	require.Equal(t, 202, r.Status, string(r.Raw))
	op := r.Body["bulk_operation_id"].(string)
	eventually(t, 10*time.Second, func() bool {
		return b.call("GET", "/api/v1/bulk/"+op, nil).Body["processed"].(float64) > 0
	}, "the operation starts")
	require.NoError(t, b.srv.Stop())

	b = start(t, dir, opts)
	evs := readProgress(t, b, "/api/v1/bulk/"+op+"/progress")
	last := evs[len(evs)-1]
	require.Equal(t, "completed", last["status"])
	require.Equal(t, 400.0, last["processed"])
	require.Equal(t, 400.0, last["affected"], "every job moved once")
	require.Equal(t, 0.0, last["skipped"], "no step applied twice (a second move would be skipped)")
	got := b.searchAll(map[string]any{"queue": "dst", "order": "asc", "limit": 1000})
	require.Equal(t, ids, got)
}
