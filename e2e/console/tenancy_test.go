package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// mutateSelectors are the console's buttons that change something: a
// session whose role may not use them must not see them.
var mutateSelectors = []string{
	"#queue-pause", "#queue-resume", "#queue-drain", "#queue-clear", "#queue-delete",
	"#job-retry", "#job-cancel", "#job-move", "#job-delete",
	"#schedule-new", "#key-new", "#namespace-new", "#role-new", "#enqueue-open", "#select-all-matching",
	"button[data-revoke]", "button[data-rotate]", "button[data-edit-ns]", "button[data-delete-ns]",
	"button[data-edit-role]", "button[data-delete-role]", "#egress-save", "#egress-add", "button[data-egress-remove]",
}

// waitAnyScreen waits until some screen of the console is ready.
func (p *page) waitAnyScreen(what string) {
	p.t.Helper()
	p.until(waitTimeout, query(`[data-screen][data-ready="true"]`), what+": a screen ready")
}

// bodyText is the page's rendered text.
func (p *page) bodyText() string {
	p.t.Helper()
	return eval[string](p, "document.body.innerText")
}

// namespaceOptions are the namespace switcher's choices.
func (p *page) namespaceOptions() []string {
	p.t.Helper()
	p.until(waitTimeout, query("#namespace"), "the namespace switcher")
	return eval[[]string](p, `[...document.querySelectorAll('#namespace option')].map(o => o.value)`)
}

// deadJob makes one dead job in queue (no retries, one failure) and returns its id.
func deadJob(t *testing.T, c *client.Client, queue string) string {
	t.Helper()
	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: queue, Payload: map[string]string{"dead": "yes"}, MaxRetries: new(0)})
	require.NoError(t, err)
	w := c.ForWorker("tenancy-w")
	j, err := w.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j, "no job to fail in %s", queue)
	require.Equal(t, res.JobID, j.ID)
	_, err = w.Fail(ctx(t), j.ID, "boom", "")
	require.NoError(t, err)
	return j.ID
}

// A viewer's session shows no button that changes anything, on any
// screen, and a mutation forged from the page is refused and changes
// nothing.
func TestConsoleTenancyViewerSeesNoMutations(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	ids := tn.seed(t, "tv.q", 3)
	dead := deadJob(t, tn.owner, "tv.dead")
	sched, err := tn.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "tv-hourly", Queue: "tv.q", Cron: "@hourly", Payload: map[string]int{}})
	require.NoError(t, err)
	batch, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{
		Jobs:  []client.EnqueueRequest{{Queue: "tv.b", Payload: 1}, {Queue: "tv.b", Payload: 2}},
		Batch: &client.BatchOptions{CallbackQueue: "tv.cb"}})
	require.NoError(t, err)
	require.NotEmpty(t, batch.BatchID)
	viewer := tn.key(t, tenancy.RoleViewer)

	// The owner sees the buttons, so their absence below is the role's doing.
	owner := openPage(t)
	owner.goTo("/console/")
	owner.signIn(tn.ownerKey)
	for path, sel := range map[string]string{
		"/console/queues/tv.q": "#queue-pause", "/console/jobs/" + dead: "#job-retry", "/console/jobs/" + ids[0]: "#job-delete",
		"/console/schedules": "#schedule-new", "/console/namespaces": "#namespace-new", "/console/keys": "button[data-revoke]",
	} {
		owner.goTo(path)
		owner.waitAnyScreen(path)
		owner.until(waitTimeout, query(sel), "the owner sees "+sel+" on "+path)
	}

	p := openPage(t)
	p.goTo("/console/")
	p.signIn(viewer.Token)
	for _, path := range []string{
		"/console/", "/console/queues", "/console/queues/tv.q", "/console/jobs/" + ids[0], "/console/jobs/" + dead,
		"/console/dead", "/console/schedules", "/console/batches", "/console/batches/" + batch.BatchID,
		"/console/workers", "/console/events", "/console/namespaces", "/console/keys", "/console/roles",
	} {
		p.goTo(path)
		p.waitAnyScreen(path)
		for _, sel := range mutateSelectors {
			assert.Zero(t, p.count(sel), "a viewer sees %s on %s", sel, path)
		}
	}
	// The navigation leaves out what a viewer may not read at all.
	for _, href := range []string{"/console/keys", "/console/roles"} {
		assert.Zero(t, p.count(fmt.Sprintf(`nav[aria-label="Main"] a[href=%q]`, href)), "a viewer's navigation links %s", href)
	}

	// Forged mutations, with the CSRF header the console would send.
	forgeries := []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/v1/queues/tv.q/pause", map[string]any{}},
		{"POST", "/api/v1/queues/tv.q/clear", map[string]any{}},
		{"POST", "/api/v1/jobs/bulk", map[string]any{"job_ids": ids, "action": "delete"}},
		{"POST", "/api/v1/jobs/bulk", map[string]any{"filter": map[string]any{"queue": "tv.q"}, "action": "cancel"}},
		{"POST", "/api/v1/jobs/" + dead + "/retry", map[string]any{}},
		{"DELETE", "/api/v1/jobs/" + ids[1], nil},
		{"POST", "/api/v1/schedules/" + sched.ID + "/disable", map[string]any{}},
		{"POST", "/api/v1/enqueue", map[string]any{"queue": "tv.q", "payload": 1}},
		{"POST", "/api/v1/keys", map[string]any{"name": "forged", "role": "viewer"}},
		{"POST", "/api/v1/namespaces", map[string]any{"name": "forged"}},
		{"PUT", "/api/v1/namespaces/" + tn.namespace + "/egress", map[string]any{"egress_allow": []string{"forged.example.com"}}},
		{"POST", "/api/v1/roles", map[string]any{"name": "forged", "permissions": []map[string]any{{"actions": []string{"job.read"}, "namespaces": []string{"*"}, "queues": []string{"*"}}}}},
	}
	for _, f := range forgeries {
		r := p.apiJSON(f.method, f.path, f.body, csrf)
		assert.Equal(t, http.StatusForbidden, r.Status, "%s %s: %s", f.method, f.path, r.Body)
	}

	// Nothing changed.
	q, err := tn.owner.GetQueue(ctx(t), "tv.q")
	require.NoError(t, err)
	assert.False(t, q.Paused, "the forged pause paused the queue")
	for _, id := range ids {
		j, err := tn.owner.GetJob(ctx(t), id)
		require.NoError(t, err, "job %s is gone", id)
		assert.Equal(t, "pending", j.State, "job %s", id)
	}
	j, err := tn.owner.GetJob(ctx(t), dead)
	require.NoError(t, err)
	assert.Equal(t, "dead", j.State, "the forged retry retried the dead job")
	s, err := tn.owner.GetSchedule(ctx(t), sched.ID)
	require.NoError(t, err)
	assert.True(t, s.Enabled, "the forged disable disabled the schedule")
	keys, err := tn.owner.ListKeys(ctx(t))
	require.NoError(t, err)
	assert.Len(t, keys, 2, "a key was forged")
	_, err = tn.owner.GetNamespace(ctx(t), "forged")
	assertAPIStatus(t, err, http.StatusNotFound)
	egress, err := tn.owner.GetNamespaceEgress(ctx(t), tn.namespace)
	require.NoError(t, err)
	assert.Empty(t, egress, "the forged egress allow-list was set")
	_, err = tn.owner.GetRole(ctx(t), "forged")
	assertAPIStatus(t, err, http.StatusNotFound)
}

// saysNotFound is a JavaScript condition: the page says it cannot find what it was asked for.
const saysNotFound = `/not found|no such|does not exist|doesn't exist/i.test(document.body.innerText)`

// Tenant B's session cannot see or reach tenant A's objects: A's URLs
// opened directly show "not found" and nothing of A, the switcher and
// the lists hold nothing of A, and the API answers 404 about A's objects
// (not 403: B does not learn they exist), in A's namespace's name too.
func TestConsoleTenancyTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	a := newTenant(t)
	nsA := "alpha-" + strings.ReplaceAll(a.name, "c", "")
	_, err := a.owner.CreateNamespace(ctx(t), nsA)
	require.NoError(t, err)
	inA := a.owner.WithNamespace(nsA)
	jobA, err := inA.Enqueue(ctx(t), client.EnqueueRequest{Queue: "alpha-queue", Payload: map[string]string{"m": "alpha-payload-marker"}})
	require.NoError(t, err)
	defJobA := a.enqueue(t, "alpha-default-queue", map[string]string{"m": "alpha-payload-marker"})
	deadA := deadJob(t, a.owner, "alpha-dead-queue")
	batchA, err := a.owner.EnqueueBatch(ctx(t), client.BatchRequest{
		Jobs:  []client.EnqueueRequest{{Queue: "alpha-batch-queue", Payload: map[string]string{"m": "alpha-payload-marker"}}},
		Batch: &client.BatchOptions{CallbackQueue: "alpha-callback-queue"}})
	require.NoError(t, err)
	schedA, err := a.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "alpha-schedule", Queue: "alpha-default-queue", Cron: "@hourly", Payload: 1})
	require.NoError(t, err)
	keyA, err := a.owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "alpha-key", Role: tenancy.RoleViewer, Namespaces: []string{nsA}})
	require.NoError(t, err)
	markers := []string{nsA, "alpha-queue", "alpha-default-queue", "alpha-dead-queue", "alpha-batch-queue", "alpha-callback-queue",
		"alpha-payload-marker", "alpha-schedule", "alpha-key", keyA.ID, a.id, a.name}

	b := newTenant(t)
	b.enqueue(t, "bravo-queue", map[string]string{"m": "bravo"})
	p := signedIn(t, b.ownerKey, "/console/", "dashboard")

	// noA checks the page shows nothing of A beyond what its URL says.
	noA := func(path string) {
		t.Helper()
		text := p.bodyText()
		for _, m := range markers {
			if !strings.Contains(path, m) {
				assert.NotContains(t, text, m, "%s shows A's %q", path, m)
			}
		}
	}
	for _, path := range []string{
		"/console/jobs/" + jobA.JobID, "/console/jobs/" + defJobA, "/console/jobs/" + deadA,
		"/console/queues/alpha-default-queue", "/console/queues/alpha-queue", "/console/batches/" + batchA.BatchID,
	} {
		p.goTo(path)
		p.waitAnyScreen(path)
		p.until(waitTimeout, saysNotFound, path+` says "not found"`)
		noA(path)
	}
	for _, path := range []string{"/console/", "/console/queues", "/console/dead", "/console/schedules", "/console/batches",
		"/console/namespaces", "/console/keys", "/console/roles", "/console/workers"} {
		p.goTo(path)
		p.waitAnyScreen(path)
		noA(path)
	}
	p.goTo("/console/namespaces")
	p.waitScreen("namespaces")
	assert.Zero(t, p.count(fmt.Sprintf(`tr[data-namespace=%q]`, nsA)))
	opts := p.namespaceOptions()
	assert.NotContains(t, opts, nsA, "B's namespace switcher lists A's namespace")
	assert.Contains(t, opts, b.namespace)
	p.goTo("/console/keys")
	p.waitScreen("keys")
	assert.Zero(t, p.count(fmt.Sprintf(`tr[data-key=%q]`, keyA.ID)))

	// The API: A's objects are not found, not forbidden.
	for _, path := range []string{
		"/api/v1/jobs/" + jobA.JobID, "/api/v1/jobs/" + defJobA, "/api/v1/jobs/" + deadA,
		"/api/v1/queues/alpha-default-queue", "/api/v1/batches/" + batchA.BatchID, "/api/v1/schedules/" + schedA.ID,
		"/api/v1/keys/" + keyA.ID, "/api/v1/namespaces/" + nsA,
	} {
		r := p.apiJSON("GET", path, nil, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, "GET %s: %s", path, r.Body)
		for _, m := range markers {
			if !strings.Contains(path, m) {
				assert.NotContains(t, r.Body, m, "GET %s tells A's %q", path, m)
			}
		}
	}
	for _, f := range []struct{ method, path string }{
		{"POST", "/api/v1/jobs/" + deadA + "/retry"}, {"POST", "/api/v1/jobs/" + defJobA + "/cancel"},
		{"DELETE", "/api/v1/jobs/" + defJobA}, {"DELETE", "/api/v1/keys/" + keyA.ID}, {"POST", "/api/v1/keys/" + keyA.ID + "/rotate"},
		{"DELETE", "/api/v1/schedules/" + schedA.ID}, {"DELETE", "/api/v1/namespaces/" + nsA},
	} {
		var body any
		if f.method == "POST" {
			body = map[string]any{}
		}
		r := p.apiJSON(f.method, f.path, body, csrf)
		assert.Equal(t, http.StatusNotFound, r.Status, "%s %s: %s", f.method, f.path, r.Body)
	}

	// Naming A's namespace gets B nothing either.
	inANS := map[string]string{"X-Jobbie-Namespace": nsA}
	for _, path := range []string{"/api/v1/jobs/" + jobA.JobID, "/api/v1/queues/alpha-queue", "/api/v1/queues", "/api/v1/schedules",
		"/api/v1/dead", "/api/v1/workers"} {
		r := p.apiJSON("GET", path, nil, inANS)
		assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, r.Status, "GET %s in %s: %s", path, nsA, r.Body)
		for _, m := range markers[1:] {
			assert.NotContains(t, r.Body, m, "GET %s in %s tells A's %q", path, nsA, m)
		}
	}
	r := p.apiJSON("POST", "/api/v1/jobs/search", map[string]any{"filter": map[string]any{}}, map[string]string{"X-Jobbie-Namespace": nsA, "X-Jobbie-CSRF": "1"})
	assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, r.Status, "search in %s: %s", nsA, r.Body)
	// B's key may use every namespace of B, so the session answers about
	// a namespace of A's name as about any name B has not made: the same,
	// within B.
	type sessionAbout struct {
		Namespace string   `json:"namespace"`
		TenantID  string   `json:"tenant_id"`
		Actions   []string `json:"actions"`
	}
	var aboutA, aboutNone sessionAbout
	p.apiJSON("GET", "/console/api/session", nil, inANS).decode(t, &aboutA)
	p.apiJSON("GET", "/console/api/session", nil, map[string]string{"X-Jobbie-Namespace": "nowhere-at-all"}).decode(t, &aboutNone)
	assert.Equal(t, b.id, aboutA.TenantID)
	assert.Equal(t, aboutNone.Actions, aboutA.Actions, "the session tells A's namespace from one that exists nowhere")

	// A's objects are all still there.
	_, err = a.owner.GetJob(ctx(t), defJobA)
	require.NoError(t, err)
	j, err := a.owner.GetJob(ctx(t), deadA)
	require.NoError(t, err)
	assert.Equal(t, "dead", j.State)
	_, err = a.owner.GetKey(ctx(t), keyA.ID)
	require.NoError(t, err)
	_, err = a.owner.GetSchedule(ctx(t), schedA.ID)
	require.NoError(t, err)
	_, err = a.owner.GetNamespace(ctx(t), nsA)
	require.NoError(t, err)
}

// A session of a key limited to namespace n1 cannot switch to n2: the
// switcher offers only n1, a saved or forged choice of n2 falls back to
// n1, and the API refuses n2.
func TestConsoleTenancyNamespaceLimitedKeyCannotSwitch(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	for _, ns := range []string{"n1", "n2"} {
		_, err := tn.owner.CreateNamespace(ctx(t), ns)
		require.NoError(t, err)
	}
	_, err := tn.owner.WithNamespace("n2").Enqueue(ctx(t), client.EnqueueRequest{Queue: "n2-only-queue", Payload: 1})
	require.NoError(t, err)
	_, err = tn.owner.WithNamespace("n1").Enqueue(ctx(t), client.EnqueueRequest{Queue: "n1-queue", Payload: 1})
	require.NoError(t, err)
	k := tn.key(t, tenancy.RoleDeveloper, "n1")

	p := signedIn(t, k.Token, "/console/namespaces", "namespaces")
	assert.Equal(t, []string{"n1"}, p.namespaceOptions())
	p.waitFor(`tr[data-namespace="n1"]`)
	for _, ns := range []string{"n2", tn.namespace} {
		assert.Zero(t, p.count(fmt.Sprintf(`tr[data-namespace=%q]`, ns)), "the namespaces screen lists %s", ns)
		assert.Zero(t, p.count(fmt.Sprintf(`button[data-use-ns=%q]`, ns)))
	}

	// A saved choice of n2 (the console keeps the namespace's name in local storage) falls back.
	eval[bool](p, `(localStorage.setItem('jobbie.namespace', 'n2'), true)`)
	p.reload()
	p.waitScreen("namespaces")
	p.until(waitTimeout, query("#namespace")+".value === 'n1'", "the console works in n1")

	// A forged choice in the switcher falls back too.
	eval[bool](p, `(() => { const s = document.querySelector('#namespace'); s.add(new Option('n2', 'n2')); s.value = 'n2';
  s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)
	p.waitScreen("dashboard")
	p.until(waitTimeout, query("#namespace")+".value === 'n1'", "the console works in n1 after a forged switch")
	assert.NotContains(t, p.bodyText(), "n2-only-queue")
	p.goTo("/console/queues")
	p.waitAnyScreen("queues")
	assert.NotContains(t, p.bodyText(), "n2-only-queue")

	var sess struct {
		Namespace  string   `json:"namespace"`
		Namespaces []string `json:"namespaces"`
	}
	p.apiJSON("GET", "/console/api/session", nil, map[string]string{"X-Jobbie-Namespace": "n2"}).decode(t, &sess)
	assert.Equal(t, "n1", sess.Namespace)
	assert.Equal(t, []string{"n1"}, sess.Namespaces)
	for _, path := range []string{"/api/v1/queues", "/api/v1/queues/n2-only-queue", "/api/v1/namespaces/n2"} {
		r := p.apiJSON("GET", path, nil, map[string]string{"X-Jobbie-Namespace": "n2"})
		assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, r.Status, "GET %s in n2: %s", path, r.Body)
		assert.NotContains(t, r.Body, "n2-only-queue")
	}
	r := p.apiJSON("POST", "/api/v1/enqueue", map[string]any{"queue": "x", "payload": 1}, map[string]string{"X-Jobbie-Namespace": "n2", "X-Jobbie-CSRF": "1"})
	assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, r.Status, r.Body)
	qs, err := tn.owner.WithNamespace("n2").ListQueues(ctx(t))
	require.NoError(t, err)
	assert.False(t, slices.ContainsFunc(qs, func(q client.Queue) bool { return q.Name == "x" }), "the n1 key enqueued into n2")
}
