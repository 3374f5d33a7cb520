package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

func TestTenantCannotTouchAnotherTenantsJobs(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	_, ctB := shared.tenant(t)
	res, err := a.Enqueue(ctx(t), client.EnqueueRequest{Queue: "secret", Payload: "a's data"})
	require.NoError(t, err)
	id := res.JobID
	g := shared.gateway + "/api/v1"

	r := call(t, "GET", g+"/jobs/"+id, ctB.OwnerKey, nil)
	require.Equal(t, 404, r.Status)
	require.NotContains(t, string(r.Raw), "a's data")
	r = call(t, "POST", g+"/fetch", ctB.OwnerKey, map[string]any{"queues": []string{"secret"}, "timeout": 0})
	require.Equal(t, 204, r.Status, "B's fetch must not see A's queue")

	// A's worker takes the job; B cannot settle or extend it.
	j, err := a.Fetch(ctx(t), client.FetchRequest{Queues: []string{"secret"}, WorkerID: "wa", Timeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, id, j.ID)
	r = call(t, "POST", g+"/ack/"+id, ctB.OwnerKey, nil)
	require.Equal(t, 404, r.Status)
	r = call(t, "POST", g+"/fail/"+id, ctB.OwnerKey, map[string]string{"error": "x"})
	require.Equal(t, 404, r.Status)
	r = call(t, "POST", g+"/heartbeat", ctB.OwnerKey, map[string]any{"jobs": map[string]any{id: map[string]any{"checkpoint": map[string]int{"evil": 1}}}})
	require.Equal(t, 200, r.Status)
	require.Equal(t, "lost", r.Body["jobs"].(map[string]any)[id].(map[string]any)["status"])

	d, err := a.GetJob(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, "active", d.State)
	require.Nil(t, d.Checkpoint)

	// Admin objects too: B sees none of A's namespaces or keys.
	r = call(t, "GET", g+"/namespaces", ctB.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Len(t, r.Body["namespaces"], 1)
	keysA, err := a.ListKeys(ctx(t))
	require.NoError(t, err)
	require.NotEmpty(t, keysA)
	r = call(t, "DELETE", g+"/keys/"+keysA[0].ID, ctB.OwnerKey, nil)
	require.Equal(t, 404, r.Status)
	r = call(t, "GET", g+"/keys", ctB.OwnerKey, nil)
	require.NotContains(t, string(r.Raw), keysA[0].ID)
	_ = ctA
}

func TestRolesAndNamespaceLimits(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	_, err := owner.CreateNamespace(ctx(t), "emails")
	require.NoError(t, err)
	worker, err := owner.CreateKey(ctx(t), clientKey("w", tenancy.RoleWorker, "emails"))
	require.NoError(t, err)
	viewer, err := owner.CreateKey(ctx(t), clientKey("v", tenancy.RoleViewer, "emails"))
	require.NoError(t, err)
	dev, err := owner.CreateKey(ctx(t), clientKey("d", tenancy.RoleDeveloper, "emails"))
	require.NoError(t, err)
	g := shared.gateway + "/api/v1"

	// The developer key's default namespace is emails.
	r := call(t, "POST", g+"/enqueue", dev.Token, map[string]string{"queue": "send"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	id := r.Body["job_id"].(string)
	// It cannot reach default, and the job is not in default.
	r = call(t, "POST", g+"/enqueue", dev.Token, map[string]string{"queue": "send"}, "X-Jobbie-Namespace", "default")
	require.Equal(t, 403, r.Status)
	r = call(t, "GET", g+"/jobs/"+id, dev.Token, nil, "X-Jobbie-Namespace", "default")
	require.Equal(t, 403, r.Status)
	d, err := owner.GetJob(ctx(t), id)
	require.Nil(t, d)
	require.True(t, client.IsNotFound(err), "%v", err)
	d, err = owner.WithNamespace("emails").GetJob(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, "pending", d.State)

	// Worker: may work and read, not enqueue. Viewer: read only.
	r = call(t, "POST", g+"/enqueue", worker.Token, map[string]string{"queue": "send"})
	require.Equal(t, 403, r.Status)
	r = call(t, "POST", g+"/fetch", viewer.Token, map[string]any{"queues": []string{"send"}, "timeout": 0})
	require.Equal(t, 403, r.Status)
	r = call(t, "GET", g+"/jobs/"+id, viewer.Token, nil)
	require.Equal(t, 200, r.Status)
	r = call(t, "POST", g+"/fetch", worker.Token, map[string]any{"queues": []string{"send"}, "timeout": 1})
	require.Equal(t, 200, r.Status)
	require.Equal(t, id, r.Body["job_id"])
	// A developer cannot mint keys; listing keys never shows a secret.
	r = call(t, "POST", g+"/keys", dev.Token, map[string]any{"name": "x", "role": "viewer"})
	require.Equal(t, 403, r.Status)
	keys, err := owner.ListKeys(ctx(t))
	require.NoError(t, err)
	require.Len(t, keys, 4)
	r = call(t, "GET", g+"/keys", "", nil)
	require.Equal(t, 401, r.Status)
	raw := call(t, "GET", g+"/keys", ct.OwnerKey, nil).Raw
	for _, k := range []string{worker.Token, viewer.Token, dev.Token} {
		require.NotContains(t, string(raw), k)
		require.NotContains(t, string(raw), strings.Split(k, ".")[2])
	}
}

func TestRevokedKeyRefusedWithinFiveSeconds(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	k, err := owner.CreateKey(ctx(t), clientKey("short-lived", tenancy.RoleProducer))
	require.NoError(t, err)
	r := call(t, "POST", shared.gateway+"/api/v1/enqueue", k.Token, map[string]string{"queue": "q"})
	require.Equal(t, 201, r.Status, "the key works (and is now cached) before revocation")
	require.NoError(t, owner.DeleteKey(ctx(t), k.ID))
	revoked := time.Now()
	eventually(t, 5*time.Second, func() bool {
		return call(t, "POST", shared.gateway+"/api/v1/enqueue", k.Token, map[string]string{"queue": "q"}).Status == 401
	}, "revoked key refused")
	t.Logf("revocation took effect after %s", time.Since(revoked).Round(time.Millisecond))
}

// GET /api/v1/bulk lists the operations of the key's namespace only:
// another tenant's owner sees none of them, a namespace of another tenant
// is unknown, one the key may not use is forbidden, no key is 401.
func TestBulkListingIsPerTenant(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	b, ctB := shared.tenant(t)
	enqueueMany(t, a, "listed", client.MaxBulkJobIDs+1)
	_, op, err := a.Bulk(ctx(t), client.BulkRequest{Filter: &client.SearchFilter{Queue: "listed"}, Action: client.BulkChangePriority,
		Priority: client.PriorityHigh})
	require.NoError(t, err)
	require.NotNil(t, op, "a background operation")

	page, err := a.ListBulk(ctx(t), 0, "")
	require.NoError(t, err)
	require.Len(t, page.Operations, 1)
	require.Equal(t, op.ID, page.Operations[0].ID)
	page, err = b.ListBulk(ctx(t), 0, "")
	require.NoError(t, err)
	require.Empty(t, page.Operations, "another tenant sees none")

	_, err = b.CreateNamespace(ctx(t), "bonly")
	require.NoError(t, err)
	_, err = a.CreateNamespace(ctx(t), "private")
	require.NoError(t, err)
	limited, err := a.CreateKey(ctx(t), clientKey("limited", tenancy.RoleDeveloper, "default"))
	require.NoError(t, err)
	g := shared.gateway + "/api/v1/bulk"
	for _, tc := range []struct {
		key, ns string
		status  int
	}{
		{ctA.OwnerKey, "bonly", 404},
		{limited.Token, "private", 403},
		{ctB.OwnerKey, "default", 200},
		{"", "", 401},
	} {
		r := call(t, "GET", g, tc.key, nil, "X-Jobbie-Namespace", tc.ns)
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.ns, r.Raw)
		require.NotContains(t, string(r.Raw), op.ID)
	}
}
