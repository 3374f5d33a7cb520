package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

const noSuchOp = "bulk_01HX00000000000000000000ZZ"

// missingJobID is the id of a job that existed and was deleted.
func missingJobID(t *testing.T, c *client.Client) string {
	t.Helper()
	id := enqueueIDs(t, c, client.EnqueueRequest{Queue: "gone"})[0]
	require.NoError(t, c.DeleteJob(ctx(t), id))
	return id
}

func bulkOK(t *testing.T, c *client.Client, req client.BulkRequest) *client.BulkResult {
	t.Helper()
	res, op, err := c.Bulk(ctx(t), req)
	require.NoError(t, err)
	require.Nil(t, op, "a small bulk request is answered at once")
	require.NotNil(t, res)
	return res
}

func TestBulkByIDsThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	dead := makeDead(t, c, "bulk.dead", 3, nil, func(id string) string { return "boom " + id })
	done := enqueueIDs(t, c, client.EnqueueRequest{Queue: "bulk.done"})[0]
	complete(t, c, "bulk.done", 1)
	pending := enqueueIDs(t, c, client.EnqueueRequest{Queue: "bulk.pending"}, client.EnqueueRequest{Queue: "bulk.pending"})
	missing := missingJobID(t, c)

	// Retry: dead and completed jobs go back to pending with attempts
	// reset; a pending job is skipped; a missing id is an error; a repeat
	// counts once.
	ids := append(slices.Clone(dead), done, pending[0], missing, dead[0])
	res := bulkOK(t, c, client.BulkRequest{JobIDs: ids, Action: client.BulkRetry})
	require.Equal(t, int64(4), res.Affected)
	require.Equal(t, int64(1), res.Skipped)
	require.Equal(t, int64(1), res.Errors)
	require.Len(t, res.Failures, 1)
	require.Equal(t, missing, res.Failures[0].JobID)
	require.Contains(t, res.Failures[0].Error, "not found")
	for _, id := range append(slices.Clone(dead), done) {
		d := requireState(t, c, id, client.StatePending)
		require.Equal(t, 0, d.Attempt, "retry resets attempts")
	}
	requireState(t, c, pending[0], client.StatePending)

	// The raw answer.
	g := shared.gateway + "/api/v1/jobs/bulk"
	r := call(t, "POST", g, ct.OwnerKey, map[string]any{"job_ids": []string{missing}, "action": "cancel"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 0.0, r.Body["affected"])
	require.Equal(t, 0.0, r.Body["skipped"])
	require.Equal(t, 1.0, r.Body["errors"])
	require.Len(t, r.Body["failures"], 1)
	require.Contains(t, r.Body, "duration_ms")

	// Requeue: only dead jobs, attempt history kept.
	rq := makeDead(t, c, "bulk.requeue", 1, nil, func(string) string { return "once" })[0]
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{rq, pending[1]}, Action: client.BulkRequeue})
	require.Equal(t, int64(1), res.Affected)
	require.Equal(t, int64(1), res.Skipped)
	d := requireState(t, c, rq, client.StatePending)
	require.Equal(t, 1, d.Attempt)
	require.Len(t, d.Errors, 1)
	require.Equal(t, "once", d.Errors[0].Error)

	// change_priority: the critical job is fetched first.
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[1]}, Action: client.BulkChangePriority, Priority: client.PriorityCritical})
	require.Equal(t, int64(1), res.Affected)
	d = requireState(t, c, pending[1], client.StatePending)
	require.Equal(t, client.PriorityCritical, d.Priority)
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[0]}, Action: client.BulkChangePriority, Priority: client.PriorityNormal})
	require.Equal(t, int64(1), res.Skipped, "already normal")
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"bulk.pending"}, WorkerID: "w1", Timeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, pending[1], j.ID)

	// Move: pending moves, active does not.
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[0], pending[1]}, Action: client.BulkMove, MoveToQueue: "bulk.moved"})
	require.Equal(t, int64(1), res.Affected)
	require.Equal(t, int64(1), res.Skipped, "an active job does not move")
	require.Equal(t, "bulk.moved", requireState(t, c, pending[0], client.StatePending).Queue)
	require.Equal(t, "bulk.pending", requireState(t, c, pending[1], client.StateActive).Queue)

	// An active job: delete skips it (as DELETE /jobs/{id} refuses it);
	// cancel marks it, its worker hears "cancel" and its ack settles it.
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[1]}, Action: client.BulkDelete})
	require.Equal(t, int64(1), res.Skipped)
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[1]}, Action: client.BulkCancel})
	require.Equal(t, int64(1), res.Affected)
	require.True(t, requireState(t, c, pending[1], client.StateActive).Cancelling)
	hb, err := c.ForWorker("w1").Heartbeat(ctx(t), map[string]client.HeartbeatJob{pending[1]: {}})
	require.NoError(t, err)
	require.True(t, hb.Cancelled(pending[1]))
	require.NoError(t, c.ForWorker("w1").Ack(ctx(t), pending[1], nil))
	requireState(t, c, pending[1], client.StateCancelled)

	// Cancel, then delete.
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[0], dead[1], done}, Action: client.BulkCancel})
	require.Equal(t, int64(3), res.Affected, "pending jobs (the retried ones too) are cancelled")
	for _, id := range []string{pending[0], dead[1], done} {
		requireState(t, c, id, client.StateCancelled)
	}
	res = bulkOK(t, c, client.BulkRequest{JobIDs: []string{pending[0], dead[0], missing}, Action: client.BulkDelete})
	require.Equal(t, int64(2), res.Affected)
	require.Equal(t, int64(1), res.Errors)
	for _, id := range []string{pending[0], dead[0]} {
		_, err := c.GetJob(ctx(t), id)
		require.True(t, client.IsNotFound(err), "%s deleted: %v", id, err)
		require.Empty(t, searchIDs(t, c, filter(client.SearchFilter{JobIDPrefix: id})), "a deleted job leaves search")
	}
}

func TestBulkByFilterThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	var src []string
	for i := range 6 {
		tier := "free"
		if i%2 == 0 {
			tier = "gold"
		}
		src = append(src, enqueueIDs(t, c, client.EnqueueRequest{Queue: "f.src", Payload: map[string]any{"amount": i * 50},
			Tags: map[string]string{"tier": tier}})...)
	}
	sched := enqueueIDs(t, c, client.EnqueueRequest{Queue: "f.src", Payload: map[string]any{"amount": 1000},
		ScheduledAt: time.Now().Add(time.Hour)})[0]
	requireState(t, c, sched, client.StateScheduled)

	// move by queue + state + payload_jq.
	res := bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{Queue: "f.src", State: []string{client.StatePending},
		PayloadJQ: ".amount >= 100"}, Action: client.BulkMove, MoveToQueue: "f.dst"})
	require.Equal(t, int64(4), res.Affected)
	require.Equal(t, int64(0), res.Skipped)
	require.Equal(t, src[2:], searchIDs(t, c, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "f.dst"}, Order: client.OrderAsc}))
	require.Equal(t, append(slices.Clone(src[:2]), sched),
		searchIDs(t, c, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "f.src"}, Order: client.OrderAsc}))

	// change_priority by tag.
	res = bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{Queue: "f.dst", Tags: map[string]string{"tier": "gold"}},
		Action: client.BulkChangePriority, Priority: client.PriorityCritical})
	require.Equal(t, int64(2), res.Affected)
	require.Equal(t, []string{src[2], src[4]},
		searchIDs(t, c, client.SearchRequest{SearchFilter: client.SearchFilter{Priority: client.PriorityCritical}, Order: client.OrderAsc}))
	for _, id := range []string{src[3], src[5]} {
		require.Equal(t, client.PriorityNormal, requireState(t, c, id, client.StatePending).Priority)
	}

	// cancel by queue (pending and scheduled), then delete the cancelled.
	res = bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{Queue: "f.src"}, Action: client.BulkCancel})
	require.Equal(t, int64(3), res.Affected)
	for _, id := range append(slices.Clone(src[:2]), sched) {
		requireState(t, c, id, client.StateCancelled)
	}
	res = bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{Queue: "f.src", State: []string{client.StateCancelled}}, Action: client.BulkDelete})
	require.Equal(t, int64(3), res.Affected)
	for _, id := range append(slices.Clone(src[:2]), sched) {
		_, err := c.GetJob(ctx(t), id)
		require.True(t, client.IsNotFound(err), "%v", err)
	}
	require.Empty(t, searchIDs(t, c, filter(client.SearchFilter{Queue: "f.src"})))

	// requeue and retry dead jobs by error text.
	smtp := makeDead(t, c, "f.dead", 2, nil, func(id string) string { return "SMTP timeout " + id })
	disk := makeDead(t, c, "f.dead", 1, nil, func(id string) string { return "disk full" })
	res = bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{State: []string{client.StateDead}, ErrorContains: "SMTP"}, Action: client.BulkRetry})
	require.Equal(t, int64(2), res.Affected)
	for _, id := range smtp {
		require.Equal(t, 0, requireState(t, c, id, client.StatePending).Attempt)
	}
	requireState(t, c, disk[0], client.StateDead)
	res = bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{Queue: "f.dead", State: []string{client.StateDead}}, Action: client.BulkRequeue})
	require.Equal(t, int64(1), res.Affected)
	d := requireState(t, c, disk[0], client.StatePending)
	require.Equal(t, 1, d.Attempt, "requeue keeps the attempt history")
	require.Len(t, d.Errors, 1)

	// A filter that matches nothing does nothing.
	res = bulkOK(t, c, client.BulkRequest{Filter: &client.SearchFilter{Queue: "f.none"}, Action: client.BulkDelete})
	require.Equal(t, int64(0), res.Affected+res.Skipped+res.Errors)
}

func TestBulkBadInputThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	id := enqueueIDs(t, c, client.EnqueueRequest{Queue: "q", Payload: map[string]any{}})[0]
	many := make([]string, client.MaxBulkJobIDs+1)
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
		{map[string]any{"job_ids": many, "action": "delete"}, "job_ids"},
		{map[string]any{"job_ids": []string{id}, "action": "move"}, "move_to_queue"},
		{map[string]any{"job_ids": []string{id}, "action": "move", "move_to_queue": "bad queue!"}, "move_to_queue"},
		{map[string]any{"job_ids": []string{id}, "action": "change_priority"}, "priority"},
		{map[string]any{"job_ids": []string{id}, "action": "change_priority", "priority": "urgent"}, "priority"},
		{map[string]any{"filter": map[string]any{}, "action": "delete"}, "filter"},
		{map[string]any{"filter": map[string]any{"state": []string{"gone"}}, "action": "delete"}, "filter.state"},
		{map[string]any{"filter": map[string]any{"queue": "q", "payload_jq": "input"}, "action": "delete"}, "payload_jq"},
		{map[string]any{"filter": map[string]any{"queue": "q", "colour": "red"}, "action": "delete"}, "colour"},
		{map[string]any{"job_ids": []string{id}, "action": "delete", "dry_run": true}, "dry_run"},
	}
	g := shared.gateway + "/api/v1/jobs/bulk"
	for _, tc := range cases {
		r := call(t, "POST", g, ct.OwnerKey, tc.body)
		require.Equal(t, 400, r.Status, "%.200v: %s", tc.body, r.Raw)
		require.Contains(t, string(r.Raw), tc.field, "%.200v", tc.body)
	}
	r := call(t, "POST", g, ct.OwnerKey, "not json")
	require.Equal(t, 400, r.Status)
	r = call(t, "POST", g, "", map[string]any{"job_ids": []string{id}, "action": "delete"})
	require.Equal(t, 401, r.Status)
	requireState(t, c, id, client.StatePending)

	// The SDK refuses what cannot be right before sending it.
	for _, req := range []client.BulkRequest{
		{JobIDs: []string{id}},
		{Action: client.BulkRetry},
		{JobIDs: []string{id}, Filter: &client.SearchFilter{Queue: "q"}, Action: client.BulkRetry},
		{JobIDs: many, Action: client.BulkDelete},
		{JobIDs: []string{id}, Action: client.BulkMove},
	} {
		_, _, err := c.Bulk(ctx(t), req)
		require.Error(t, err)
	}
	// And passes the server's refusals on with the field.
	_, _, err := c.Bulk(ctx(t), client.BulkRequest{JobIDs: []string{id}, Action: client.BulkChangePriority, Priority: "urgent"})
	require.True(t, client.IsBadRequest(err), "%v", err)
	e, _ := client.AsError(err)
	require.Equal(t, "priority", e.Field)
	requireState(t, c, id, client.StatePending)

	for _, m := range []string{"GET", "DELETE"} {
		r = call(t, m, shared.gateway+"/api/v1/bulk/"+noSuchOp, ct.OwnerKey, nil)
		require.Equal(t, 404, r.Status, "%s: %s", m, r.Raw)
	}
	r = call(t, "GET", shared.gateway+"/api/v1/bulk/"+noSuchOp+"/progress", ct.OwnerKey, nil)
	require.Equal(t, 404, r.Status)
	r = call(t, "GET", shared.gateway+"/api/v1/bulk/"+noSuchOp, "", nil)
	require.Equal(t, 401, r.Status)
}

// A key of one tenant can do nothing to another tenant's jobs through
// bulk, by id or by filter.
func TestBulkTenantIsolation(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	b, _ := shared.tenant(t)
	pending := enqueueIDs(t, a, client.EnqueueRequest{Queue: "iso", Payload: map[string]any{"secret": 1}, Tags: map[string]string{"k": "v"}})[0]
	dead := makeDead(t, a, "iso.dead", 1, nil, func(string) string { return "SMTP" })[0]
	aIDs := []string{pending, dead}
	bOwn := enqueueIDs(t, b, client.EnqueueRequest{Queue: "iso"})[0]

	for _, req := range []client.BulkRequest{
		{Action: client.BulkRetry}, {Action: client.BulkDelete}, {Action: client.BulkCancel}, {Action: client.BulkRequeue},
		{Action: client.BulkMove, MoveToQueue: "stolen"}, {Action: client.BulkChangePriority, Priority: client.PriorityCritical},
	} {
		byIDs := req
		byIDs.JobIDs = aIDs
		res := bulkOK(t, b, byIDs)
		require.Equal(t, int64(0), res.Affected, req.Action)
		require.Equal(t, int64(0), res.Skipped, req.Action)
		require.Equal(t, int64(2), res.Errors, req.Action)
		require.Len(t, res.Failures, 2)
		for _, f := range res.Failures {
			require.Contains(t, aIDs, f.JobID)
			require.Contains(t, f.Error, "not found")
		}
		for _, f := range []client.SearchFilter{{Queue: "iso.dead"}, {Tags: map[string]string{"k": "v"}}, {JobIDPrefix: pending},
			{State: []string{client.StateDead}}, {PayloadContains: "secret"}} {
			byFilter := req
			byFilter.Filter = &f
			res = bulkOK(t, b, byFilter)
			require.Equal(t, int64(0), res.Affected+res.Skipped+res.Errors, "%s %+v", req.Action, f)
		}
	}
	d := requireState(t, a, pending, client.StatePending)
	require.Equal(t, "iso", d.Queue)
	require.Equal(t, client.PriorityNormal, d.Priority)
	d = requireState(t, a, dead, client.StateDead)
	require.Equal(t, "iso.dead", d.Queue)
	require.Equal(t, 1, d.Attempt)
	requireState(t, b, bOwn, client.StatePending)

	// The namespace header: a namespace the key does not have.
	_, err := b.CreateNamespace(ctx(t), "bonly")
	require.NoError(t, err)
	_, err = a.CreateNamespace(ctx(t), "private")
	require.NoError(t, err)
	limited, err := a.CreateKey(ctx(t), clientKey("limited", tenancy.RoleDeveloper, "default"))
	require.NoError(t, err)
	g := shared.gateway + "/api/v1"
	body := map[string]any{"filter": map[string]any{"queue": "iso"}, "action": "delete"}
	for _, tc := range []struct {
		key, ns string
		status  int
	}{
		{ctA.OwnerKey, "bonly", 404},    // B's namespace: not A's, so unknown
		{limited.Token, "private", 403}, // A's namespace the key may not use
	} {
		r := call(t, "POST", g+"/jobs/bulk", tc.key, body, "X-Jobbie-Namespace", tc.ns)
		require.Equal(t, tc.status, r.Status, "bulk in %s: %s", tc.ns, r.Raw)
		for _, m := range []string{"GET", "DELETE"} {
			r = call(t, m, g+"/bulk/"+noSuchOp, tc.key, nil, "X-Jobbie-Namespace", tc.ns)
			require.Equal(t, tc.status, r.Status, "%s bulk op in %s: %s", m, tc.ns, r.Raw)
		}
		r = call(t, "GET", g+"/bulk/"+noSuchOp+"/progress", tc.key, nil, "X-Jobbie-Namespace", tc.ns)
		require.Equal(t, tc.status, r.Status, "progress in %s: %s", tc.ns, r.Raw)
	}
	requireState(t, a, pending, client.StatePending)
}

// sseEvents reads a progress stream through the gateway to its done event
// and returns the events' names and data.
func sseEvents(t *testing.T, url, key string) (names []string, last map[string]any) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(c, "GET", url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	sc := bufio.NewScanner(res.Body)
	ev := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			last = map[string]any{}
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &last))
			names = append(names, ev)
			if ev == "done" {
				return names, last
			}
		}
	}
	t.Fatalf("progress stream ended without done: %v", names)
	return nil, nil
}

// enqueueMany enqueues n jobs to queue, 1,000 per request, and returns
// their ids in order.
func enqueueMany(t *testing.T, c *client.Client, queue string, n int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		jobs := make([]client.EnqueueRequest, min(1000, n-len(ids)))
		for i := range jobs {
			jobs[i] = client.EnqueueRequest{Queue: queue, Payload: map[string]any{"i": len(ids) + i}}
		}
		res, err := c.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: jobs})
		require.NoError(t, err)
		require.Len(t, res.JobIDs, len(jobs))
		ids = append(ids, res.JobIDs...)
	}
	return ids
}

// A filter matching more than 10,000 jobs runs in the background; its
// progress streams through the gateway to the owner only.
func TestBulkBackgroundOperationThroughTheGateway(t *testing.T) {
	t.Parallel()
	began := time.Now()
	a, ctA := shared.tenant(t)
	b, ctB := shared.tenant(t)
	viewerKey, err := a.CreateKey(ctx(t), clientKey("v", tenancy.RoleViewer))
	require.NoError(t, err)
	viewer := client.New(shared.gateway, viewerKey.Token)

	const n = client.MaxBulkJobIDs + 1
	ids := enqueueMany(t, a, "bg", n-1)
	// 10,000 matching jobs are still done at once.
	atOnce := bulkOK(t, a, client.BulkRequest{Filter: &client.SearchFilter{Queue: "bg", State: []string{client.StatePending}},
		Action: client.BulkChangePriority, Priority: client.PriorityNormal})
	require.Equal(t, int64(n-1), atOnce.Skipped, "already normal")
	require.Equal(t, int64(0), atOnce.Affected)
	ids = append(ids, enqueueIDs(t, a, client.EnqueueRequest{Queue: "bg"})...)
	later := enqueueIDs(t, a, client.EnqueueRequest{Queue: "bg", ScheduledAt: time.Now().Add(time.Hour)})[0]
	aside := enqueueIDs(t, a, client.EnqueueRequest{Queue: "bg.aside"})[0]
	t.Logf("enqueued %d jobs in %s", n, time.Since(began).Round(time.Millisecond))

	f := &client.SearchFilter{Queue: "bg", State: []string{client.StatePending}}
	res, op, err := a.Bulk(ctx(t), client.BulkRequest{Filter: f, Action: client.BulkChangePriority, Priority: client.PriorityHigh})
	require.NoError(t, err)
	require.Nil(t, res)
	require.NotNil(t, op)
	require.True(t, strings.HasPrefix(op.ID, "bulk_"), op.ID)
	require.Equal(t, client.BulkProcessing, op.Status)
	require.Equal(t, int64(n), op.Total)
	require.Equal(t, "/api/v1/bulk/"+op.ID+"/progress", op.ProgressURL)

	// Another tenant learns nothing about it and cannot stop it.
	_, err = b.BulkStatus(ctx(t), op.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = b.CancelBulk(ctx(t), op.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = b.WatchBulk(ctx(t), op.ID, nil)
	require.True(t, client.IsNotFound(err), "%v", err)
	for _, path := range []string{"/api/v1/bulk/" + op.ID, op.ProgressURL} {
		r := call(t, "GET", shared.gateway+path, ctB.OwnerKey, nil)
		require.Equal(t, 404, r.Status, "%s: %s", path, r.Raw)
		require.Equal(t, "not_found", r.code())
	}
	// A viewer may read it but not cancel it.
	_, err = viewer.CancelBulk(ctx(t), op.ID)
	require.True(t, client.IsForbidden(err), "%v", err)

	// Follow it through the gateway to the end.
	var updates []client.BulkOperation
	wctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final, err := a.WatchBulk(wctx, op.ID, func(p client.BulkOperation) { updates = append(updates, p) })
	require.NoError(t, err)
	require.Equal(t, op.ID, final.ID)
	require.Equal(t, client.BulkChangePriority, final.Action)
	require.Equal(t, client.BulkCompleted, final.Status)
	require.Equal(t, int64(n), final.Total)
	require.Equal(t, int64(n), final.Processed)
	require.Equal(t, int64(n), final.Affected)
	require.Equal(t, int64(0), final.Skipped)
	require.Equal(t, int64(0), final.Errors)
	require.NotNil(t, final.FinishedAt)
	require.NotNil(t, final.CreatedAt)
	require.False(t, final.CreatedAt.IsZero())
	require.False(t, final.FinishedAt.Before(*final.CreatedAt))
	var prev int64
	for _, u := range updates {
		require.Equal(t, op.ID, u.ID)
		require.GreaterOrEqual(t, u.Processed, prev, "progress only grows")
		require.LessOrEqual(t, u.Processed, int64(n))
		prev = u.Processed
	}
	t.Logf("operation done after %d progress updates, %s", len(updates), final.FinishedAt.Sub(*final.CreatedAt).Round(time.Millisecond))

	st, err := a.BulkStatus(ctx(t), op.ID)
	require.NoError(t, err)
	require.Equal(t, client.BulkCompleted, st.Status)
	require.Equal(t, int64(n), st.Affected)
	require.Equal(t, int64(n), st.Processed)
	st, err = viewer.BulkStatus(ctx(t), op.ID)
	require.NoError(t, err)
	require.Equal(t, client.BulkCompleted, st.Status)
	vfinal, err := viewer.WatchBulk(wctx, op.ID, nil)
	require.NoError(t, err)
	require.Equal(t, client.BulkCompleted, vfinal.Status)
	r := call(t, "GET", shared.gateway+"/api/v1/bulk/"+op.ID, ctA.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, "completed", r.Body["status"])
	require.Equal(t, float64(n), r.Body["affected"])
	names, last := sseEvents(t, shared.gateway+op.ProgressURL, ctA.OwnerKey)
	require.Equal(t, "done", names[len(names)-1])
	require.Equal(t, "completed", last["status"])
	require.Equal(t, float64(n), last["affected"])
	r = call(t, "DELETE", shared.gateway+"/api/v1/bulk/"+op.ID, viewerKey.Token, nil)
	require.Equal(t, 403, r.Status)
	// Cancelling a finished operation changes nothing.
	st, err = a.CancelBulk(ctx(t), op.ID)
	require.NoError(t, err)
	require.Equal(t, client.BulkCompleted, st.Status)
	require.Equal(t, int64(n), st.Affected)

	// Every pending job of bg is high now; the scheduled one and another
	// queue's are not.
	high := searchIDs(t, a, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "bg", Priority: client.PriorityHigh},
		Order: client.OrderAsc, Limit: client.MaxSearchLimit})
	require.Equal(t, ids, high)
	require.Equal(t, client.PriorityNormal, requireState(t, a, later, client.StateScheduled).Priority)
	require.Equal(t, client.PriorityNormal, requireState(t, a, aside, client.StatePending).Priority)

	// A second operation, cancelled at once: what it did stays done, and
	// nothing more happens after the cancel.
	r = call(t, "POST", shared.gateway+"/api/v1/jobs/bulk", ctA.OwnerKey, map[string]any{
		"filter": map[string]any{"queue": "bg", "state": []string{"pending"}}, "action": "change_priority", "priority": "critical"})
	require.Equal(t, 202, r.Status, string(r.Raw))
	op2, _ := r.Body["bulk_operation_id"].(string)
	require.True(t, strings.HasPrefix(op2, "bulk_"), string(r.Raw))
	require.Equal(t, "processing", r.Body["status"])
	require.Equal(t, float64(n), r.Body["estimated_total"])
	require.Equal(t, "/api/v1/bulk/"+op2+"/progress", r.Body["progress_url"])
	_, err = b.CancelBulk(ctx(t), op2)
	require.True(t, client.IsNotFound(err), "%v", err)
	c2, err := a.CancelBulk(ctx(t), op2)
	require.NoError(t, err)
	require.Contains(t, []string{client.BulkCancelled, client.BulkCompleted}, c2.Status)
	final2, err := a.WatchBulk(wctx, op2, nil)
	require.NoError(t, err)
	require.Equal(t, c2.Status, final2.Status)
	require.Equal(t, c2.Processed, final2.Processed, "no step after the cancel")
	critical := searchIDs(t, a, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "bg", Priority: client.PriorityCritical},
		Limit: client.MaxSearchLimit})
	require.Len(t, critical, int(final2.Affected), "the jobs it changed before the cancel stay changed")
	if final2.Status == client.BulkCancelled {
		require.Less(t, final2.Processed, int64(n))
		t.Logf("cancelled after %d of %d jobs", final2.Processed, n)
	}
	require.Less(t, time.Since(began), 30*time.Second)
	t.Logf("took %s", time.Since(began).Round(time.Millisecond))
}
