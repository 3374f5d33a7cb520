package shard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// searchIDs runs one search and returns the ids of its page and the body.
func (b *bundle) search(body map[string]any) ([]string, resp) {
	b.t.Helper()
	r := b.call("POST", "/api/v1/jobs/search", body)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	var ids []string
	for _, j := range r.Body["jobs"].([]any) {
		ids = append(ids, j.(map[string]any)["id"].(string))
	}
	return ids, r
}

// searchAll follows cursors to the end and returns every id in order.
func (b *bundle) searchAll(body map[string]any) []string {
	b.t.Helper()
	var all []string
	for range 10_000 {
		ids, r := b.search(body)
		all = append(all, ids...)
		c, _ := r.Body["cursor"].(string)
		if c == "" {
			require.Equal(b.t, false, r.Body["has_more"])
			return all
		}
		body["cursor"] = c
	}
	b.t.Fatal("search did not end")
	return nil
}

// finish fetches and acks, or fails, the job id of queue.
func (b *bundle) settle(queue, id string, ack bool) {
	b.t.Helper()
	f := b.fetch([]string{queue}, nil)
	require.Equal(b.t, 200, f.Status, string(f.Raw))
	require.Equal(b.t, id, f.Body["job_id"])
	if ack {
		require.Equal(b.t, 200, b.call("POST", "/api/v1/ack/"+id, map[string]any{"result": map[string]any{"ok": true}}).Status)
		return
	}
	require.Equal(b.t, 200, b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": "SMTP timeout on " + id}).Status)
}

type searchWorld struct {
	pending, completed, dead, scheduled, other []string
	active                                     string
}

// seedSearch puts jobs of queue "a" in every common state, and pending
// jobs in queue "b", oldest first in each list.
func seedSearch(b *bundle) *searchWorld {
	w := &searchWorld{}
	for i := range 3 {
		id := b.enqueue(map[string]any{"queue": "a", "payload": map[string]any{"n": i, "kind": "done"}})
		b.settle("a", id, true)
		w.completed = append(w.completed, id)
	}
	for i := range 2 {
		id := b.enqueue(map[string]any{"queue": "a", "payload": map[string]any{"n": i, "kind": "bad"}, "max_retries": 0})
		b.settle("a", id, false)
		w.dead = append(w.dead, id)
	}
	w.active = b.enqueue(map[string]any{"queue": "a", "payload": map[string]any{"kind": "running"}})
	require.Equal(b.t, 200, b.fetch([]string{"a"}, nil).Status)
	for i := range 5 {
		w.pending = append(w.pending, b.enqueue(map[string]any{"queue": "a", "payload": map[string]any{"n": i, "amount": i * 50},
			"priority": []string{"normal", "high", "critical", "normal", "high"}[i], "tags": map[string]string{"tenant": []string{"acme", "zen"}[i%2]}}))
	}
	w.scheduled = append(w.scheduled, b.enqueue(map[string]any{"queue": "a", "payload": map[string]any{},
		"scheduled_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}))
	for range 4 {
		w.other = append(w.other, b.enqueue(map[string]any{"queue": "b", "payload": map[string]any{}}))
	}
	return w
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestSearchByQueueAndState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := seedSearch(b)

	ids, r := b.search(map[string]any{"queue": "a", "state": []string{"pending"}})
	require.Equal(t, reversed(w.pending), ids, "newest first by default, across priority bands")
	require.Equal(t, 5.0, r.Body["total"])
	require.Equal(t, true, r.Body["total_exact"])
	require.Equal(t, false, r.Body["has_more"])
	require.Nil(t, r.Body["cursor"])
	require.Contains(t, r.Body, "duration_ms")

	ids, _ = b.search(map[string]any{"queue": "a", "state": []string{"pending"}, "order": "asc"})
	require.Equal(t, w.pending, ids)
	ids, _ = b.search(map[string]any{"queue": "a", "state": "completed"})
	require.Equal(t, reversed(w.completed), ids)
	ids, r = b.search(map[string]any{"queue": "a", "state": []string{"dead"}})
	require.Equal(t, reversed(w.dead), ids)
	job := r.Body["jobs"].([]any)[0].(map[string]any)
	require.Equal(t, "SMTP timeout on "+w.dead[1], job["last_error"])
	require.Equal(t, "dead", job["state"])
	require.Nil(t, job["timeline"], "search answers leave the timeline out")
	ids, _ = b.search(map[string]any{"state": []string{"active"}})
	require.Equal(t, []string{w.active}, ids)
	ids, _ = b.search(map[string]any{"state": []string{"scheduled"}})
	require.Equal(t, w.scheduled, ids)

	ids, r = b.search(map[string]any{"state": []string{"pending"}, "limit": 1000})
	require.Len(t, ids, 9, "both queues")
	require.Equal(t, 9.0, r.Body["total"])
	ids, _ = b.search(map[string]any{"queue": "a", "state": []string{"dead", "completed"}, "order": "asc"})
	require.Equal(t, append(append([]string{}, w.completed...), w.dead...), ids, "states merge in creation order")
	all := b.searchAll(map[string]any{"limit": 4})
	require.Len(t, all, 3+2+1+5+1+4, "every job once")
	ids, r = b.search(map[string]any{"queue": "nope"})
	require.Empty(t, ids)
	require.Equal(t, 0.0, r.Body["total"])
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := seedSearch(b)
	cases := []struct {
		name string
		body map[string]any
		want []string // in default order: newest first
	}{
		{"tag", map[string]any{"tags": map[string]string{"tenant": "acme"}}, []string{w.pending[4], w.pending[2], w.pending[0]}},
		{"tag and state", map[string]any{"tags": map[string]string{"tenant": "zen"}, "state": []string{"pending"}}, []string{w.pending[3], w.pending[1]}},
		{"priority", map[string]any{"queue": "a", "priority": "high"}, []string{w.pending[4], w.pending[1]}},
		{"payload_contains", map[string]any{"payload_contains": `"kind":"bad"`}, reversed(w.dead)},
		{"payload_jq", map[string]any{"queue": "a", "payload_jq": ".amount > 100"}, []string{w.pending[4], w.pending[3]}},
		{"payload_jq string", map[string]any{"payload_jq": `.kind | startswith("run")`}, []string{w.active}},
		{"has_errors", map[string]any{"has_errors": true}, reversed(w.dead)},
		{"error_contains", map[string]any{"error_contains": "SMTP timeout on " + w.dead[0]}, []string{w.dead[0]}},
		{"worker_id", map[string]any{"worker_id": "w1", "state": []string{"active"}}, []string{w.active}},
		{"attempt_min", map[string]any{"queue": "a", "attempt_min": 1, "state": []string{"completed"}}, reversed(w.completed)},
		{"attempt_max 0", map[string]any{"queue": "b", "attempt_max": 0}, reversed(w.other)},
		{"job_id_prefix whole id", map[string]any{"job_id_prefix": w.dead[0]}, []string{w.dead[0]}},
		{"job_id_prefix", map[string]any{"job_id_prefix": w.other[0][:6], "queue": "b"}, reversed(w.other)},
		{"no match", map[string]any{"payload_jq": ".missing == 1"}, nil},
	}
	for _, tc := range cases {
		ids, _ := b.search(tc.body)
		require.Equal(t, tc.want, ids, tc.name)
	}

	// Creation-time windows: after is inclusive, before exclusive.
	d := b.job(w.pending[2])
	at := d["created_at"].(string)
	ids, _ := b.search(map[string]any{"queue": "a", "state": []string{"pending"}, "created_after": at})
	require.Equal(t, []string{w.pending[4], w.pending[3], w.pending[2]}, ids)
	ids, _ = b.search(map[string]any{"queue": "a", "state": []string{"pending"}, "created_before": at})
	require.Equal(t, []string{w.pending[1], w.pending[0]}, ids)
	ids, r := b.search(map[string]any{"queue": "a", "created_after": at, "payload_contains": "amount"})
	require.Equal(t, []string{w.pending[4], w.pending[3], w.pending[2]}, ids)
	require.Equal(t, true, r.Body["total_exact"])
	require.Equal(t, 3.0, r.Body["total"])

	// Other sort keys.
	ids, _ = b.search(map[string]any{"queue": "a", "state": []string{"pending"}, "sort": "priority"})
	require.Equal(t, []string{w.pending[2], w.pending[4], w.pending[1], w.pending[3], w.pending[0]}, ids, "critical first, then newest")
	got := b.searchAll(map[string]any{"queue": "a", "state": []string{"pending"}, "sort": "priority", "order": "asc", "limit": 2})
	require.Equal(t, []string{w.pending[0], w.pending[3], w.pending[1], w.pending[4], w.pending[2]}, got)
}

func TestSearchPagingUnderInserts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var first []string
	for i := range 60 {
		first = append(first, b.enqueue(map[string]any{"queue": "p", "payload": map[string]any{"i": i}}))
	}
	for _, order := range []string{"desc", "asc"} {
		for _, filter := range []map[string]any{
			{"queue": "p", "state": []string{"pending"}}, // from the index alone
			{"queue": "p", "payload_contains": `"i"`},    // records checked one by one
		} {
			body := map[string]any{"order": order, "limit": 7}
			for k, v := range filter {
				body[k] = v
			}
			seen := map[string]bool{}
			var added []string
			for page := 0; ; page++ {
				ids, r := b.search(body)
				for _, id := range ids {
					require.False(t, seen[id], "job %s repeated on page %d (%s %v)", id, page, order, filter)
					seen[id] = true
				}
				// New jobs between pages: newer than every cursor.
				added = append(added, b.enqueue(map[string]any{"queue": "p", "payload": map[string]any{"i": -1}}))
				c, _ := r.Body["cursor"].(string)
				if c == "" {
					break
				}
				body["cursor"] = c
			}
			for _, id := range first {
				require.True(t, seen[id], "job %s skipped (%s %v)", id, order, filter)
			}
			for _, id := range added[:len(added)-1] {
				require.Equal(t, order == "asc", seen[id], "a job added while paging shows only in ascending order")
			}
			first = append(first, added...)
		}
	}
}

func TestSearchBudgetGivesPartialPages(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.SearchBudget = time.Nanosecond })
	var want []string
	for i := range 300 {
		id := b.enqueue(map[string]any{"queue": "q", "payload": map[string]any{"i": i, "even": i%2 == 0}})
		if i%2 == 0 {
			want = append(want, id)
		}
	}
	body := map[string]any{"queue": "q", "payload_jq": ".even", "order": "asc", "limit": 1000}
	ids, r := b.search(body)
	require.Equal(t, true, r.Body["partial"], "the budget ran out")
	require.Equal(t, true, r.Body["has_more"])
	require.Less(t, len(ids), len(want))
	require.Equal(t, false, r.Body["total_exact"])
	got := b.searchAll(body)
	require.Equal(t, want, got, "following partial pages finds every match once, in order")
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.enqueue(map[string]any{"queue": "q", "payload": map[string]any{}})
	_, first := b.search(map[string]any{"queue": "q", "limit": 1})
	_ = first
	p1 := b.call("POST", "/api/v1/jobs/search", map[string]any{"limit": 1})
	require.Equal(t, 200, p1.Status)
	cases := []struct {
		body  any
		field string
	}{
		{map[string]any{"state": []string{"sleeping"}}, "state"},
		{map[string]any{"priority": "urgent"}, "priority"},
		{map[string]any{"payload_jq": `input`}, "payload_jq"},
		{map[string]any{"payload_jq": `.a[]`}, "payload_jq"},
		{map[string]any{"payload_jq": `.a ==`}, "payload_jq"},
		{map[string]any{"limit": 1001}, "limit"},
		{map[string]any{"created_after": "yesterday"}, "created_after"},
		{map[string]any{"attempt_min": 3, "attempt_max": 1}, "attempt"},
		{map[string]any{"sort": "payload"}, "sort"},
		{map[string]any{"order": "sideways"}, "order"},
		{map[string]any{"cursor": "not-a-cursor"}, "cursor"},
		{map[string]any{"queue": "q", "payload_contains": "x", "cursor": "AQ"}, "cursor"},
		{map[string]any{"colour": "red"}, "colour"},
		{map[string]any{"tags": map[string]string{"a\x00b": "c"}}, "tags"},
		{map[string]any{"tags": map[string]string{"a": "b\x00c"}}, "tags"},
	}
	for _, tc := range cases {
		r := b.call("POST", "/api/v1/jobs/search", tc.body)
		require.Equal(t, 400, r.Status, "%v: %s", tc.body, r.Raw)
		require.Contains(t, string(r.Raw), tc.field, "%v", tc.body)
	}
	// A cursor of one search does not serve another.
	c := p1.Body["cursor"]
	if c != nil {
		r := b.call("POST", "/api/v1/jobs/search", map[string]any{"queue": "other", "cursor": c})
		require.Equal(t, 400, r.Status)
		require.Contains(t, string(r.Raw), "cursor")
	}
	r := b.call("POST", "/api/v1/jobs/search", "not json")
	require.Equal(t, 400, r.Status)
	r = b.call("POST", "/api/v1/jobs/search", map[string]any{}, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
	require.True(t, strings.Contains(string(r.Raw), "namespace"), string(r.Raw))
}

func TestSearchIsPerNamespace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q", "payload": map[string]any{"secret": 1}, "tags": map[string]string{"k": "v"}})
	other := "t_01hx0000000000000000000009/default"
	for _, body := range []map[string]any{{}, {"queue": "q"}, {"tags": map[string]string{"k": "v"}}, {"job_id_prefix": id}, {"payload_contains": "secret"}} {
		r := b.call("POST", "/api/v1/jobs/search", body, wire.ShardNamespaceHeader, other)
		require.Equal(t, 200, r.Status)
		require.Empty(t, r.Body["jobs"], fmt.Sprint(body))
		require.Equal(t, 0.0, r.Body["total"])
	}
}

func TestSearchByBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{
		"jobs":  []map[string]any{{"queue": "img", "payload": map[string]any{"n": 1}}, {"queue": "img", "payload": map[string]any{"n": 2}}},
		"batch": map[string]any{"callback_queue": "img.done"}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	batch := r.Body["batch_id"].(string)
	var members []string
	for _, id := range r.Body["job_ids"].([]any) {
		members = append(members, id.(string))
	}
	b.enqueue(map[string]any{"queue": "img", "payload": map[string]any{"n": 3}})
	ids, res := b.search(map[string]any{"batch_id": batch, "order": "asc"})
	require.Equal(t, members, ids)
	require.Equal(t, true, res.Body["total_exact"])
	ids, _ = b.search(map[string]any{"batch_id": batch, "payload_jq": ".n == 2"})
	require.Equal(t, members[1:], ids)
	require.Equal(t, 204, b.call("DELETE", "/api/v1/jobs/"+members[0], nil).Status)
	ids, _ = b.search(map[string]any{"batch_id": batch})
	require.Equal(t, members[1:], ids, "a deleted job leaves the batch index")
	ids, _ = b.search(map[string]any{"batch_id": "batch_01HX0000000000000000000000"})
	require.Empty(t, ids)
}
