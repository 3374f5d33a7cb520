package shard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// Lists and searches under a queue scope show and count only the queues
// in it (scope_http_test.go has the rest).

// names lists field of each object of a list in body.
func names(r resp, list, field string) []string {
	var out []string
	for _, x := range r.Body[list].([]any) {
		out = append(out, x.(map[string]any)[field].(string))
	}
	return out
}

// die makes a job of queue dead: enqueued without retries, fetched and
// failed.
func (b *bundle) die(queue string) string {
	b.t.Helper()
	id := b.enqueue(map[string]any{"queue": queue, "max_retries": 0})
	b.settle(queue, id, false)
	require.Equal(b.t, "dead", b.job(id)["state"])
	return id
}

func TestScopeFiltersListsAndSearches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.withScope("emails.*")
	none := b.withScope("")
	inScope := func(q string) bool { return strings.HasPrefix(q, "emails.") }

	// Dead jobs in two queues in scope, between others': the page merges
	// the queues' lists newest first, cursors included.
	e1, _, e2, _, e3 := b.die("emails.x"), b.die("billing"), b.die("emails.y"), b.die("billing"), b.die("emails.x")
	var pages []string
	path := "/api/v1/dead?limit=1"
	for {
		r := e.call("GET", path, nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		pages = append(pages, names(r, "jobs", "id")...)
		c, _ := r.Body["cursor"].(string)
		if c == "" {
			require.Equal(t, false, r.Body["has_more"])
			break
		}
		path = "/api/v1/dead?limit=1&cursor=" + c
	}
	require.Equal(t, []string{e3, e2, e1}, pages)
	require.Equal(t, []string{e3, e2, e1}, names(e.call("GET", "/api/v1/dead", nil), "jobs", "id"))
	require.Len(t, b.call("GET", "/api/v1/dead", nil).Body["jobs"], 5, "every queue")
	require.Equal(t, []string{e3, e1}, names(e.call("GET", "/api/v1/dead?queue=emails.x", nil), "jobs", "id"))
	require.Empty(t, none.call("GET", "/api/v1/dead", nil).Body["jobs"])

	// Jobs of every state, tagged alike.
	for _, q := range []string{"emails.send", "billing", "emails.send", "billing", "emails.bounce"} {
		b.enqueue(map[string]any{"queue": q, "tags": map[string]string{"tenant": "a"}, "payload": map[string]any{"k": 1}})
	}
	f := b.fetch([]string{"billing"}, map[string]any{"worker_id": "wb"})
	require.Equal(t, 200, f.Status)
	f = b.fetch([]string{"emails.send"}, map[string]any{"worker_id": "wb"})
	require.Equal(t, 200, f.Status)
	activeMine := f.Body["job_id"].(string)
	require.Equal(t, 204, b.fetch([]string{"billing.idle", "emails.idle"}, map[string]any{"worker_id": "wb"}).Status)

	// Queues.
	require.Equal(t, []string{"emails.bounce", "emails.send", "emails.x", "emails.y"}, names(e.call("GET", "/api/v1/queues", nil), "queues", "name"))
	require.Contains(t, names(b.call("GET", "/api/v1/queues", nil), "queues", "name"), "billing")
	require.Empty(t, none.call("GET", "/api/v1/queues", nil).Body["queues"])

	// Searches, by every kind of source: the queues' state lists, the
	// active jobs, a tag's index, a whole id; totals count what is shown.
	every := map[string]string{} // id → queue, unscoped
	for _, j := range b.call("POST", "/api/v1/jobs/search", map[string]any{"limit": 1000}).Body["jobs"].([]any) {
		m := j.(map[string]any)
		every[m["id"].(string)] = m["queue"].(string)
	}
	expect := func(states ...string) []string {
		var ids []string
		for _, j := range b.call("POST", "/api/v1/jobs/search", map[string]any{"state": states, "limit": 1000}).Body["jobs"].([]any) {
			if m := j.(map[string]any); inScope(m["queue"].(string)) {
				ids = append(ids, m["id"].(string))
			}
		}
		return ids
	}
	for _, body := range []map[string]any{
		{}, {"state": []string{"pending"}}, {"state": []string{"active"}}, {"state": []string{"dead", "pending"}},
		{"tags": map[string]string{"tenant": "a"}}, {"payload_contains": `"k"`, "state": []string{"pending"}},
	} {
		ids, r := e.search(body)
		require.NotEmpty(t, ids, "%v", body)
		for _, id := range ids {
			require.True(t, inScope(every[id]), "%v found %s of %s", body, id, every[id])
		}
		require.Equal(t, float64(len(ids)), r.Body["total"], "%v", body)
		if st, ok := body["state"].([]string); ok && len(body) == 1 {
			require.Equal(t, expect(st...), ids)
			require.Equal(t, true, r.Body["total_exact"])
		}
	}
	ids, _ := e.search(map[string]any{"state": []string{"active"}})
	require.Equal(t, []string{activeMine}, ids)
	for id, q := range every {
		got, r := e.search(map[string]any{"job_id_prefix": id})
		if inScope(q) {
			require.Equal(t, []string{id}, got)
		} else {
			require.Empty(t, got, "a whole id of another queue")
			require.Equal(t, 0.0, r.Body["total"])
		}
	}
	got, r := none.search(map[string]any{})
	require.Empty(t, got)
	require.Equal(t, 0.0, r.Body["total"])

	// Bulk by filter acts on jobs in scope only.
	pendingOther := b.searchAll(map[string]any{"queue": "billing", "state": []string{"pending"}})
	pendingMine := expect("pending")
	require.Len(t, pendingMine, 2)
	require.NotEmpty(t, pendingOther)
	br := e.bulk(map[string]any{"filter": map[string]any{"state": []string{"pending"}}, "action": "cancel"})
	require.Equal(t, 200, br.Status, string(br.Raw))
	require.Equal(t, float64(len(pendingMine)), br.Body["affected"])
	require.Empty(t, expect("pending"))
	require.Equal(t, pendingOther, b.searchAll(map[string]any{"queue": "billing", "state": []string{"pending"}}), "untouched")

	// Workers show only their queues and jobs in scope.
	w := e.call("GET", "/api/v1/workers", nil).Body["workers"].([]any)
	require.Len(t, w, 2) // wb, and w1 of the dead jobs (emails.x and emails.y)
	for _, x := range w {
		m := x.(map[string]any)
		for _, q := range m["queues"].([]any) {
			require.True(t, inScope(q.(string)), "%v", m)
		}
		if m["id"] == "wb" {
			require.Equal(t, []any{"emails.idle"}, m["queues"])
			require.Equal(t, []any{activeMine}, m["active_job_ids"])
			require.Equal(t, 1.0, m["active_jobs"])
		}
	}
	require.Empty(t, none.call("GET", "/api/v1/workers", nil).Body["workers"])
	all := b.call("GET", "/api/v1/workers", nil).Body["workers"].([]any)
	require.Len(t, all, 2)
}

// The event stream of a scoped key carries only its queues' events.
func TestScopeFiltersEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.withScope("emails.*").stream()
	require.Equal(t, "jobbie events", s.next().Comment)
	all := b.stream()
	require.Equal(t, "jobbie events", all.next().Comment)
	other := b.enqueue(map[string]any{"queue": "billing"})
	mine := b.enqueue(map[string]any{"queue": "emails.send"})
	require.Equal(t, other, all.nextEvent().Data["job_id"])
	require.Equal(t, mine, all.nextEvent().Data["job_id"])
	ev := s.nextEvent()
	require.Equal(t, mine, ev.Data["job_id"], "billing's event is not sent")
	require.Equal(t, "emails.send", ev.Data["queue"])
}

// A background bulk operation keeps the scope it was started under: it
// acts on its queues only, and only callers whose scope covers it see it.
func TestScopeBackgroundBulk(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.BulkSyncMax, c.BulkChunk = 10, 7 })
	e := b.withScope("emails.*")
	enqueueMany(b, "emails.send", 25)
	enqueueMany(b, "billing", 25)
	r := e.bulk(map[string]any{"filter": map[string]any{"state": []string{"pending"}}, "action": "change_priority", "priority": "high"})
	require.Equal(t, 202, r.Status, string(r.Raw))
	require.Equal(t, 25.0, r.Body["estimated_total"], "the estimate counts the scope's jobs")
	op := r.Body["bulk_operation_id"].(string)
	evs := readProgress(t, e, "/api/v1/bulk/"+op+"/progress")
	require.Equal(t, 25.0, evs[len(evs)-1]["affected"])
	high := func(q string) int {
		return len(b.searchAll(map[string]any{"queue": q, "priority": "high"}))
	}
	require.Equal(t, 25, high("emails.send"))
	require.Zero(t, high("billing"), "outside the scope")

	unscoped := b.bulk(map[string]any{"filter": map[string]any{"queue": "billing"}, "action": "change_priority", "priority": "critical"})
	require.Equal(t, 202, unscoped.Status, string(unscoped.Raw))
	theirs := unscoped.Body["bulk_operation_id"].(string)

	const missingOp = "bulk_01HX00000000000000000000ZZ"
	for _, c := range []struct {
		who     *bundle
		visible []string
	}{
		{b, []string{theirs, op}},
		{e, []string{op}},
		{b.withScope("emails.send.*,emails.*"), []string{op}},
		{b.withScope("emails.send"), nil}, // it acts on every emails.* queue
		{b.withScope("billing"), []string{theirs}},
		{b.withScope(""), nil},
	} {
		scope := "(none)"
		if c.who.scope != nil {
			scope = *c.who.scope
		}
		list := c.who.call("GET", "/api/v1/bulk", nil)
		require.Equal(t, 200, list.Status, string(list.Raw))
		require.Equal(t, c.visible, names(list, "operations", "id"), scope)
		for _, id := range []string{op, theirs} {
			r := c.who.call("GET", "/api/v1/bulk/"+id, nil)
			if slices.Contains(c.visible, id) {
				require.Equal(t, 200, r.Status, scope)
				continue
			}
			sameAsMissing(t, r, b.call("GET", "/api/v1/bulk/"+missingOp, nil), id, missingOp)
			sameAsMissing(t, c.who.call("DELETE", "/api/v1/bulk/"+id, nil), b.call("DELETE", "/api/v1/bulk/"+missingOp, nil), id, missingOp)
			require.Equal(t, 404, c.who.call("GET", "/api/v1/bulk/"+id+"/progress", nil).Status)
		}
	}
}

// A scope as long as the contract allows passes; a follower hands it on
// with the write it forwards to its leader.
func TestScopeHeaderLimitsAndForwarding(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 2)
	var long []string
	for i := 0; len(strings.Join(long, ",")) < wire.MaxQueueScopeHeader-200; i++ {
		long = append(long, fmt.Sprintf("team-%03d.%s.*", i, strings.Repeat("q", 100)))
	}
	header := strings.Join(append(long, "emails.*"), ",")
	require.LessOrEqual(t, len(header), wire.MaxQueueScopeHeader)
	leader, follower := g.nodes[0].withScope(header), g.nodes[1].withScope(header)
	require.Equal(t, 201, leader.call("POST", "/api/v1/enqueue", map[string]any{"queue": "emails.send"}).Status)

	forbidden(t, retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "billing"}), "queue")
	r := retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "emails.send"})
	created(t, r)
	require.Equal(t, 200, follower.call("GET", "/api/v1/jobs/"+r.Body["job_id"].(string), nil).Status, "read where it was written")
	id := g.nodes[0].enqueue(map[string]any{"queue": "billing"})
	r = retry(t, g.nodes[1].withScope("emails.*"), "POST", "/api/v1/jobs/"+id+"/cancel", nil)
	require.Equal(t, 404, r.Status, string(r.Raw))
	require.Equal(t, "pending", g.nodes[0].job(id)["state"])
}
