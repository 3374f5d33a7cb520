package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// usageLag bounds how long the work takes to show in usage: control pulls
// every 2 s in jobbie dev and gateways push api requests every 5 s; the
// rest is slack for a loaded machine.
const usageLag = 30 * time.Second

// Jobs enqueued, fetched, acked and failed through the gateway show in
// GET /api/v1/usage exactly, per namespace and for the tenant, within the
// metering lag; api requests count every admitted request once; another
// tenant sees none of it.
func TestUsageMetersTheWorkExactly(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	requests := 0 // requests this test sends with the tenant's keys
	_, err := owner.CreateNamespace(ctx(t), "emails")
	require.NoError(t, err)
	billing, err := owner.CreateKey(ctx(t), clientKey("billing", tenancy.RoleBilling, "*"))
	require.NoError(t, err)
	viewer, err := owner.CreateKey(ctx(t), clientKey("viewer", tenancy.RoleViewer, "*"))
	require.NoError(t, err)
	requests += 3

	const n = 25
	work(t, owner, "default", n, 0, &requests)
	work(t, owner.WithNamespace("emails"), "emails", 4, 1, &requests)

	bill := client.New(shared.gateway, billing.Token)
	var u wire.Usage
	polls := 0
	eventually(t, usageLag, func() bool {
		r := call(t, http.MethodGet, shared.gateway+"/api/v1/usage", billing.Token, nil)
		polls++
		require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
		u = wire.Usage{}
		require.NoError(t, json.Unmarshal(r.Raw, &u))
		return u.Totals.Executions == n+4 && u.Totals.JobsCompleted == n+3 && u.Totals.APIRequests >= int64(requests)
	}, "usage shows the work")
	require.Equal(t, "hour", u.Granularity)
	require.Len(t, u.Tenant, 24)
	require.Equal(t, wire.UsageMeters{JobsEnqueued: n + 4, Executions: n + 4, JobsCompleted: n + 3, JobsFailed: 1, JobsDead: 1,
		ActiveJobSeconds: u.Totals.ActiveJobSeconds, StorageByteHours: u.Totals.StorageByteHours, APIRequests: u.Totals.APIRequests}, u.Totals)
	// Every request counted once: the work, then some of the polls before
	// this answer (those pushed in time), never more.
	require.LessOrEqual(t, u.Totals.APIRequests, int64(requests+polls-1))
	require.Len(t, u.Namespaces, 2)
	byName := map[string]wire.NamespaceMeters{}
	for _, nm := range u.Namespaces {
		byName[nm.Namespace] = nm
		require.Zero(t, nm.Totals.APIRequests, "api requests are the tenant's")
	}
	require.Equal(t, int64(n), byName["default"].Totals.JobsCompleted)
	require.Equal(t, int64(3), byName["emails"].Totals.JobsCompleted)
	require.Equal(t, int64(1), byName["emails"].Totals.JobsDead)
	last := u.Tenant[len(u.Tenant)-1]
	require.True(t, last.Incomplete, "the current hour is still open")

	one := call(t, http.MethodGet, shared.gateway+"/api/v1/usage?granularity=day&namespace=emails", billing.Token, nil)
	require.Equal(t, http.StatusOK, one.Status, "body: %s", one.Raw)
	var day wire.Usage
	require.NoError(t, json.Unmarshal(one.Raw, &day))
	require.Len(t, day.Tenant, 30)
	require.Equal(t, int64(4), day.Totals.Executions)
	require.Zero(t, day.Totals.APIRequests)

	// Billing reads usage and nothing else; a viewer cannot read usage.
	_, err = bill.ListNamespaces(ctx(t))
	require.True(t, client.IsForbidden(err), "billing may not list namespaces: %v", err)
	r := call(t, http.MethodGet, shared.gateway+"/api/v1/queues", billing.Token, nil)
	require.Equal(t, http.StatusForbidden, r.Status)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/usage", viewer.Token, nil)
	require.Equal(t, http.StatusForbidden, r.Status)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/usage?granularity=week", billing.Token, nil)
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "granularity", r.field())
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/usage?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", billing.Token, nil)
	require.Equal(t, "from", r.field(), "over 31 days of hours")
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/usage", "", nil)
	require.Equal(t, http.StatusUnauthorized, r.Status)

	// Another tenant sees its own (nothing), not this one's.
	_, other := shared.tenant(t)
	var theirs wire.Usage
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/usage", other.OwnerKey, nil)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	require.NoError(t, json.Unmarshal(r.Raw, &theirs))
	require.Empty(t, theirs.Namespaces)
	require.Zero(t, theirs.Totals.Executions)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/usage?namespace=emails", other.OwnerKey, nil)
	require.Equal(t, http.StatusNotFound, r.Status, "its own emails does not exist: %s", r.Raw)
}

// work enqueues count jobs in queue ns.work of c's namespace, fetches
// each and acks it, except the last fails of them, which fail without
// retries and die. Every call adds to *requests.
func work(t *testing.T, c *client.Client, ns string, count, fails int, requests *int) {
	t.Helper()
	queue := ns + ".work"
	never := 0
	for i := range count {
		_, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: queue, Payload: i, MaxRetries: &never})
		require.NoError(t, err)
	}
	for i := range count {
		job, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, job, "job %d of %s", i, ns)
		if i >= count-fails {
			_, err = c.Fail(ctx(t), job.ID, fmt.Sprintf("failure %d", i), "")
		} else {
			err = c.Ack(ctx(t), job.ID, nil)
		}
		require.NoError(t, err)
	}
	*requests += 3 * count
}
