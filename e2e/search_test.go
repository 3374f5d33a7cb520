package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// enqueueIDs enqueues each request in order and returns the new job ids.
func enqueueIDs(t *testing.T, c *client.Client, reqs ...client.EnqueueRequest) []string {
	t.Helper()
	var ids []string
	for _, r := range reqs {
		res, err := c.Enqueue(ctx(t), r)
		require.NoError(t, err)
		ids = append(ids, res.JobID)
	}
	return ids
}

// makeDead enqueues n jobs to queue that never retry, and fails each with
// msg(id): they end dead with one error each. Ids are oldest first.
func makeDead(t *testing.T, c *client.Client, queue string, n int, payload func(i int) any, msg func(id string) string) []string {
	t.Helper()
	zero := 0
	var ids []string
	for i := range n {
		var p any
		if payload != nil {
			p = payload(i)
		}
		ids = append(ids, enqueueIDs(t, c, client.EnqueueRequest{Queue: queue, Payload: p, MaxRetries: &zero})...)
	}
	for range n {
		j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, WorkerID: "w-" + queue, Timeout: time.Second})
		require.NoError(t, err)
		require.NotNil(t, j, "a job of %s to fail", queue)
		_, err = c.Fail(ctx(t), j.ID, msg(j.ID), "")
		require.NoError(t, err)
	}
	for _, id := range ids {
		requireState(t, c, id, client.StateDead)
	}
	return ids
}

// complete fetches and acks the n oldest jobs of queue.
func complete(t *testing.T, c *client.Client, queue string, n int) {
	t.Helper()
	for range n {
		j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, WorkerID: "w-" + queue, Timeout: time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		require.NoError(t, c.Ack(ctx(t), j.ID, map[string]bool{"ok": true}))
	}
}

func requireState(t *testing.T, c *client.Client, id, state string) *client.JobDetail {
	t.Helper()
	d, err := c.GetJob(ctx(t), id)
	require.NoError(t, err, id)
	require.Equal(t, state, d.State, "state of %s", id)
	return d
}

// searchIDs follows every page of req and returns the ids in order,
// failing on a repeated id.
func searchIDs(t *testing.T, c *client.Client, req client.SearchRequest) []string {
	t.Helper()
	ids := []string{}
	seen := map[string]bool{}
	for j, err := range c.SearchAll(ctx(t), req) {
		require.NoError(t, err)
		require.False(t, seen[j.ID], "job %s listed twice", j.ID)
		seen[j.ID] = true
		ids = append(ids, j.ID)
	}
	return ids
}

func filter(f client.SearchFilter) client.SearchRequest { return client.SearchRequest{SearchFilter: f} }

func rev(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func pick(s []string, idx ...int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, s[i])
	}
	return out
}

// searchWorld is a tenant's jobs in every common state, for search tests.
type searchWorld struct {
	completed, dead, pending, other []string
}

// seedSearchWorld fills queue emails.send with 3 completed, 2 dead (error
// "SMTP timeout on <id>") and 5 pending jobs (in that order), and queue
// other with 2 pending jobs.
func seedSearchWorld(t *testing.T, c *client.Client) *searchWorld {
	t.Helper()
	w := &searchWorld{}
	for i := range 3 {
		w.completed = append(w.completed, enqueueIDs(t, c, client.EnqueueRequest{Queue: "emails.send",
			Payload: map[string]any{"n": i, "kind": "done"}})...)
	}
	complete(t, c, "emails.send", 3)
	w.dead = makeDead(t, c, "emails.send", 2, func(i int) any { return map[string]any{"n": i, "kind": "bad"} },
		func(id string) string { return "SMTP timeout on " + id })
	prio := []client.Priority{client.PriorityNormal, client.PriorityHigh, client.PriorityCritical, client.PriorityNormal, client.PriorityHigh}
	for i := range 5 {
		template := "welcome"
		if i%2 == 1 {
			template = "legacy.v1"
		}
		region := "us-east"
		if i >= 3 {
			region = "eu-west"
		}
		tags := []string{"basic"}
		if i == 1 || i == 4 {
			tags = []string{"basic", "vip"}
		}
		w.pending = append(w.pending, enqueueIDs(t, c, client.EnqueueRequest{
			Queue: "emails.send", Priority: prio[i],
			Tags: map[string]string{"tenant": []string{"acme-corp", "zen"}[i%2]},
			Payload: map[string]any{
				"n": i, "amount": i * 50, "email": fmt.Sprintf("user%d@example.com", i), "template": template,
				"tags": tags, "metadata": map[string]any{"region": region}, "items": make([]int, i*2),
			},
		})...)
	}
	w.other = enqueueIDs(t, c, client.EnqueueRequest{Queue: "other", Payload: map[string]any{"email": "user1@example.com"}},
		client.EnqueueRequest{Queue: "other", Payload: map[string]any{"email": "user2@example.com"}})
	return w
}

func TestSearchFiltersThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	w := seedSearchWorld(t, c)
	yes, no := true, false

	// Queue and state: one page, newest first, with an exact total.
	page, err := c.Search(ctx(t), filter(client.SearchFilter{Queue: "emails.send", State: []string{client.StatePending}}))
	require.NoError(t, err)
	var got []string
	for _, j := range page.Jobs {
		got = append(got, j.ID)
		require.Equal(t, "emails.send", j.Queue)
		require.Equal(t, client.StatePending, j.State)
		require.Nil(t, j.Timeline, "search answers leave the timeline out")
	}
	require.Equal(t, rev(w.pending), got)
	require.Equal(t, int64(5), page.Total)
	require.True(t, page.TotalExact)
	require.False(t, page.HasMore)
	require.Empty(t, page.Cursor)
	require.False(t, page.Partial)

	page, err = c.Search(ctx(t), filter(client.SearchFilter{Queue: "emails.send", State: []string{client.StateDead}}))
	require.NoError(t, err)
	require.Len(t, page.Jobs, 2)
	for i, j := range page.Jobs {
		id := w.dead[1-i]
		require.Equal(t, id, j.ID)
		require.Equal(t, client.StateDead, j.State)
		require.Equal(t, "SMTP timeout on "+id, j.LastError)
		require.Equal(t, 1, j.Attempt)
		require.JSONEq(t, fmt.Sprintf(`{"n":%d,"kind":"bad"}`, 1-i), string(j.Payload))
	}

	// The pending jobs' creation times, for the time windows.
	mid, err := c.GetJob(ctx(t), w.pending[2])
	require.NoError(t, err)
	require.False(t, mid.CreatedAt.IsZero())
	afterMid := mid.CreatedAt

	cases := []struct {
		name string
		f    client.SearchFilter
		want []string // newest first
	}{
		{"queue", client.SearchFilter{Queue: "other"}, rev(w.other)},
		{"queue and states", client.SearchFilter{Queue: "emails.send", State: []string{client.StateCompleted, client.StateDead}},
			rev(append(slices.Clone(w.completed), w.dead...))},
		{"tag", client.SearchFilter{Tags: map[string]string{"tenant": "acme-corp"}}, rev(pick(w.pending, 0, 2, 4))},
		{"tag and state", client.SearchFilter{Tags: map[string]string{"tenant": "zen"}, State: []string{client.StatePending}}, rev(pick(w.pending, 1, 3))},
		{"tag no match", client.SearchFilter{Tags: map[string]string{"tenant": "acme-corp", "x": "y"}}, []string{}},
		{"priority", client.SearchFilter{Queue: "emails.send", Priority: client.PriorityHigh}, rev(pick(w.pending, 1, 4))},
		{"priority critical", client.SearchFilter{Priority: client.PriorityCritical}, pick(w.pending, 2)},
		{"payload_contains", client.SearchFilter{PayloadContains: "user3@example.com"}, pick(w.pending, 3)},
		{"payload_contains in a queue", client.SearchFilter{Queue: "other", PayloadContains: "user1@example.com"}, pick(w.other, 0)},
		{"payload_contains json", client.SearchFilter{PayloadContains: `"kind":"bad"`}, rev(w.dead)},
		// The seed's payload_jq examples.
		{"jq equality", client.SearchFilter{Queue: "emails.send", PayloadJQ: `.email == "user1@example.com"`}, pick(w.pending, 1)},
		{"jq numeric", client.SearchFilter{PayloadJQ: `.amount > 100`}, rev(pick(w.pending, 3, 4))},
		{"jq contains", client.SearchFilter{PayloadJQ: `.tags | contains("vip")`}, rev(pick(w.pending, 1, 4))},
		{"jq nested", client.SearchFilter{PayloadJQ: `.metadata.region == "us-east"`}, rev(pick(w.pending, 0, 1, 2))},
		{"jq startswith", client.SearchFilter{PayloadJQ: `.template | startswith("welcome")`}, rev(pick(w.pending, 0, 2, 4))},
		{"jq length", client.SearchFilter{PayloadJQ: `.items | length > 5`}, rev(pick(w.pending, 3, 4))},
		{"jq and state", client.SearchFilter{State: []string{client.StateDead}, PayloadJQ: `.n == 0`}, pick(w.dead, 0)},
		{"jq no match", client.SearchFilter{PayloadJQ: `.missing == 1`}, []string{}},
		{"created_after (inclusive)", client.SearchFilter{Queue: "emails.send", CreatedAfter: &afterMid}, rev(pick(w.pending, 2, 3, 4))},
		{"created_before (exclusive)", client.SearchFilter{Queue: "emails.send", State: []string{client.StatePending}, CreatedBefore: &afterMid},
			rev(pick(w.pending, 0, 1))},
		{"error_contains", client.SearchFilter{ErrorContains: "SMTP timeout on " + w.dead[0]}, pick(w.dead, 0)},
		{"error_contains both", client.SearchFilter{Queue: "emails.send", ErrorContains: "SMTP"}, rev(w.dead)},
		{"error_contains none", client.SearchFilter{ErrorContains: "disk full"}, []string{}},
		{"has_errors", client.SearchFilter{HasErrors: &yes}, rev(w.dead)},
		{"has_errors false", client.SearchFilter{Queue: "emails.send", State: []string{client.StateDead, client.StateCompleted}, HasErrors: &no},
			rev(w.completed)},
		{"job_id_prefix whole id", client.SearchFilter{JobIDPrefix: w.dead[0]}, pick(w.dead, 0)},
		{"worker_id", client.SearchFilter{WorkerID: "w-emails.send", State: []string{client.StateCompleted}}, rev(w.completed)},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, searchIDs(t, c, filter(tc.f)), tc.name)
	}

	// Ascending order, and sorting by priority.
	ids := searchIDs(t, c, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "emails.send", State: []string{client.StatePending}},
		Order: client.OrderAsc})
	require.Equal(t, w.pending, ids)
	ids = searchIDs(t, c, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "emails.send", State: []string{client.StatePending}},
		Sort: client.SortPriority})
	require.Equal(t, pick(w.pending, 2, 4, 1, 3, 0), ids, "critical first, then high, then normal; newest first within each")
}

func TestSearchPagingThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	jobs := make([]client.EnqueueRequest, 53)
	for i := range jobs {
		jobs[i] = client.EnqueueRequest{Queue: "paging", Payload: map[string]any{"i": i}}
	}
	res, err := c.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: jobs})
	require.NoError(t, err)
	all := res.JobIDs
	require.Len(t, all, 53)
	enqueueIDs(t, c, client.EnqueueRequest{Queue: "not-paging"})

	for _, order := range []string{client.OrderDesc, client.OrderAsc} {
		for _, f := range []client.SearchFilter{
			{Queue: "paging", State: []string{client.StatePending}}, // from an index
			{Queue: "paging", PayloadContains: `"i"`},               // checked one by one
		} {
			req := client.SearchRequest{SearchFilter: f, Order: order, Limit: 7}
			var ids []string
			pages := 0
			seen := map[string]bool{}
			for page, err := range c.SearchPages(ctx(t), req) {
				require.NoError(t, err)
				pages++
				require.LessOrEqual(t, len(page.Jobs), 7)
				for _, j := range page.Jobs {
					require.False(t, seen[j.ID], "job %s repeated on page %d", j.ID, pages)
					seen[j.ID] = true
					ids = append(ids, j.ID)
				}
				if page.HasMore {
					require.NotEmpty(t, page.Cursor)
				} else {
					require.Empty(t, page.Cursor, "the last page has no cursor")
				}
				require.LessOrEqual(t, pages, 20, "paging does not end")
			}
			want := all
			if order == client.OrderDesc {
				want = rev(all)
			}
			require.Equal(t, want, ids, "every job once, in order (%s, %+v)", order, f)
			require.GreaterOrEqual(t, pages, 8)
		}
	}

	// The raw wire: a cursor continues only its own search.
	g := shared.gateway + "/api/v1/jobs/search"
	key := ct.OwnerKey
	r := call(t, "POST", g, key, map[string]any{"queue": "paging", "limit": 50})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["jobs"], 50)
	require.Equal(t, 53.0, r.Body["total"])
	require.Equal(t, true, r.Body["has_more"])
	cur, _ := r.Body["cursor"].(string)
	require.NotEmpty(t, cur)
	r = call(t, "POST", g, key, map[string]any{"queue": "paging", "limit": 50, "cursor": cur})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["jobs"], 3)
	require.Equal(t, false, r.Body["has_more"])
	require.Nil(t, r.Body["cursor"])
	r = call(t, "POST", g, key, map[string]any{"queue": "other", "cursor": cur})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "cursor", r.field())
}

func TestSearchBadInputAndAuth(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	enqueueIDs(t, c, client.EnqueueRequest{Queue: "q", Payload: map[string]any{"a": 1}})
	g := shared.gateway + "/api/v1/jobs/search"
	cases := []struct {
		body  any
		field string
	}{
		{map[string]any{"state": []string{"sleeping"}}, "state"},
		{map[string]any{"state": "sleeping"}, "state"},
		{map[string]any{"priority": "urgent"}, "priority"},
		{map[string]any{"payload_jq": `input`}, "payload_jq"},
		{map[string]any{"payload_jq": `.[]`}, "payload_jq"},
		{map[string]any{"payload_jq": `.a[]`}, "payload_jq"},
		{map[string]any{"payload_jq": `.a ==`}, "payload_jq"},
		{map[string]any{"payload_jq": `env`}, "payload_jq"},
		{map[string]any{"limit": 1001}, "limit"},
		{map[string]any{"limit": -1}, "limit"},
		{map[string]any{"created_after": "yesterday"}, "created_after"},
		{map[string]any{"sort": "payload"}, "sort"},
		{map[string]any{"order": "sideways"}, "order"},
		{map[string]any{"cursor": "not-a-cursor"}, "cursor"},
		{map[string]any{"colour": "red"}, "colour"},
	}
	for _, tc := range cases {
		r := call(t, "POST", g, ct.OwnerKey, tc.body)
		require.Equal(t, 400, r.Status, "%v: %s", tc.body, r.Raw)
		require.Equal(t, "bad_request", r.code(), "%v: %s", tc.body, r.Raw)
		require.Contains(t, r.field(), tc.field, "%v: %s", tc.body, r.Raw)
		require.Contains(t, string(r.Raw), tc.field, "the message names the field: %v", tc.body)
	}
	r := call(t, "POST", g, ct.OwnerKey, "not json")
	require.Equal(t, 400, r.Status, string(r.Raw))

	// Through the SDK: the error names the field.
	_, err := c.Search(ctx(t), filter(client.SearchFilter{PayloadJQ: "input"}))
	require.True(t, client.IsBadRequest(err), "%v", err)
	e, ok := client.AsError(err)
	require.True(t, ok)
	require.Equal(t, "payload_jq", e.Field)
	_, err = c.Search(ctx(t), client.SearchRequest{Limit: 1001})
	require.True(t, client.IsBadRequest(err), "%v", err)
	e, _ = client.AsError(err)
	require.Equal(t, "limit", e.Field)

	// No key, a bad key.
	r = call(t, "POST", g, "", map[string]any{})
	require.Equal(t, 401, r.Status)
	require.Equal(t, "unauthenticated", r.code())
	r = call(t, "POST", g, "not.a.key", map[string]any{})
	require.Equal(t, 401, r.Status)
	_, err = client.New(shared.gateway, "").Search(ctx(t), client.SearchRequest{})
	require.True(t, client.IsUnauthenticated(err), "%v", err)
	// A tampered key (A's owner key with another signature).
	parts := strings.Split(ct.OwnerKey, ".")
	require.Len(t, parts, 3)
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	r = call(t, "POST", g, forged, map[string]any{})
	require.Equal(t, 401, r.Status, string(r.Raw))
}

// The role table (tenancy.BuiltinPolicies): search, bulk status and the
// progress stream need job.read (every role but billing has it); bulk
// and cancelling a bulk operation need job.manage (owner, admin,
// developer).
func TestSearchAndBulkRoles(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	id := enqueueIDs(t, owner, client.EnqueueRequest{Queue: "roles", Payload: map[string]any{"x": 1}})[0]
	g := shared.gateway + "/api/v1"
	keys := map[tenancy.Role]string{tenancy.RoleOwner: ct.OwnerKey}
	for _, role := range []tenancy.Role{tenancy.RoleAdmin, tenancy.RoleDeveloper, tenancy.RoleProducer, tenancy.RoleWorker, tenancy.RoleViewer, tenancy.RoleBilling} {
		k, err := owner.CreateKey(ctx(t), clientKey(string(role), role))
		require.NoError(t, err)
		keys[role] = k.Token
	}
	canRead := map[tenancy.Role]bool{tenancy.RoleOwner: true, tenancy.RoleAdmin: true, tenancy.RoleDeveloper: true,
		tenancy.RoleProducer: true, tenancy.RoleWorker: true, tenancy.RoleViewer: true}
	canManage := map[tenancy.Role]bool{tenancy.RoleOwner: true, tenancy.RoleAdmin: true, tenancy.RoleDeveloper: true}

	for role, key := range keys {
		r := call(t, "POST", g+"/jobs/search", key, map[string]any{"queue": "roles"})
		if canRead[role] {
			require.Equal(t, 200, r.Status, "%s search: %s", role, r.Raw)
			require.Len(t, r.Body["jobs"], 1, role)
		} else {
			require.Equal(t, 403, r.Status, "%s search: %s", role, r.Raw)
			require.Equal(t, "forbidden", r.code())
			require.NotContains(t, string(r.Raw), id)
		}
		// Reading an operation: allowed roles get past RBAC to a 404.
		for _, path := range []string{"/bulk/bulk_01HX00000000000000000000ZZ", "/bulk/bulk_01HX00000000000000000000ZZ/progress"} {
			r = call(t, "GET", g+path, key, nil)
			want := 403
			if canRead[role] {
				want = 404
			}
			require.Equal(t, want, r.Status, "%s GET %s: %s", role, path, r.Raw)
		}
		r = call(t, "DELETE", g+"/bulk/bulk_01HX00000000000000000000ZZ", key, nil)
		want := 403
		if canManage[role] {
			want = 404
		}
		require.Equal(t, want, r.Status, "%s DELETE bulk: %s", role, r.Raw)
		if !canManage[role] {
			for _, body := range []map[string]any{
				{"job_ids": []string{id}, "action": "delete"},
				{"filter": map[string]any{"queue": "roles"}, "action": "cancel"},
			} {
				r = call(t, "POST", g+"/jobs/bulk", key, body)
				require.Equal(t, 403, r.Status, "%s bulk: %s", role, r.Raw)
				require.Equal(t, "forbidden", r.code())
			}
		}
	}
	requireState(t, owner, id, client.StatePending)

	// A developer may: change_priority by id (the one role-allowed write here).
	dev := client.New(shared.gateway, keys[tenancy.RoleDeveloper])
	res, op, err := dev.Bulk(ctx(t), client.BulkRequest{JobIDs: []string{id}, Action: client.BulkChangePriority, Priority: client.PriorityHigh})
	require.NoError(t, err)
	require.Nil(t, op)
	require.Equal(t, int64(1), res.Affected)
	d := requireState(t, owner, id, client.StatePending)
	require.Equal(t, client.PriorityHigh, d.Priority)

	// SDK errors for the refused calls.
	viewer := client.New(shared.gateway, keys[tenancy.RoleViewer])
	_, _, err = viewer.Bulk(ctx(t), client.BulkRequest{JobIDs: []string{id}, Action: client.BulkDelete})
	require.True(t, client.IsForbidden(err), "%v", err)
	_, err = viewer.CancelBulk(ctx(t), "bulk_01HX00000000000000000000ZZ")
	require.True(t, client.IsForbidden(err), "%v", err)
	_, err = client.New(shared.gateway, keys[tenancy.RoleBilling]).Search(ctx(t), client.SearchRequest{})
	require.True(t, client.IsForbidden(err), "%v", err)
	page, err := viewer.Search(ctx(t), filter(client.SearchFilter{Queue: "roles"}))
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	_, err = owner.GetJob(ctx(t), id)
	require.NoError(t, err, "refused bulk calls deleted nothing")
}

// A key only searches its own tenant's namespaces.
func TestSearchTenantIsolation(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	b, ctB := shared.tenant(t)
	secret := enqueueIDs(t, a, client.EnqueueRequest{Queue: "iso", Payload: map[string]any{"secret": "a-secret-value", "amount": 500},
		Tags: map[string]string{"owner": "tenant-a"}})[0]
	dead := makeDead(t, a, "iso.dead", 1, nil, func(string) string { return "A's private failure" })[0]
	yes := true
	bOwn := enqueueIDs(t, b, client.EnqueueRequest{Queue: "iso", Payload: map[string]any{"mine": true}})[0]

	for _, f := range []client.SearchFilter{
		{},
		{Queue: "iso"},
		{JobIDPrefix: secret},
		{JobIDPrefix: dead},
		{Tags: map[string]string{"owner": "tenant-a"}},
		{PayloadContains: "a-secret-value"},
		{PayloadJQ: `.amount > 100`},
		{State: []string{client.StateDead}},
		{ErrorContains: "private failure"},
		{HasErrors: &yes},
	} {
		page, err := b.Search(ctx(t), client.SearchRequest{SearchFilter: f, Limit: 1000})
		require.NoError(t, err)
		for _, j := range page.Jobs {
			require.Equal(t, bOwn, j.ID, "B sees only its own job (filter %+v)", f)
		}
		raw := call(t, "POST", shared.gateway+"/api/v1/jobs/search", ctB.OwnerKey, client.SearchRequest{SearchFilter: f})
		require.Equal(t, 200, raw.Status)
		require.NotContains(t, string(raw.Raw), secret)
		require.NotContains(t, string(raw.Raw), dead)
		require.NotContains(t, string(raw.Raw), "a-secret-value")
		require.NotContains(t, string(raw.Raw), "private failure")
	}
	ids := searchIDs(t, b, client.SearchRequest{})
	require.Equal(t, []string{bOwn}, ids)

	// The namespace header: only namespaces of the key.
	_, err := b.CreateNamespace(ctx(t), "bonly")
	require.NoError(t, err)
	enqueueIDs(t, b.WithNamespace("bonly"), client.EnqueueRequest{Queue: "iso", Payload: map[string]any{"b": 1}})
	g := shared.gateway + "/api/v1/jobs/search"
	r := call(t, "POST", g, ctA.OwnerKey, map[string]any{}, "X-Jobbie-Namespace", "bonly")
	require.Equal(t, 404, r.Status, "A has no namespace bonly: %s", r.Raw)
	_, err = a.CreateNamespace(ctx(t), "private")
	require.NoError(t, err)
	limited, err := a.CreateKey(ctx(t), clientKey("limited", tenancy.RoleDeveloper, "default"))
	require.NoError(t, err)
	r = call(t, "POST", g, limited.Token, map[string]any{}, "X-Jobbie-Namespace", "private")
	require.Equal(t, 403, r.Status, string(r.Raw))
	r = call(t, "POST", g, limited.Token, map[string]any{"job_id_prefix": secret})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["jobs"], 1, "its default namespace is A's default")
}
