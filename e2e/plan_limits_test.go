package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// Plan limits the gateway carries or enforces, through the real binary:
// the operator puts a plan on control and creates a tenant on it, which
// holds from the tenant's creation (a later change would wait for the
// next UTC hour).

// tenantOnPlan creates a plan of the fields given (name and currency
// added) and a tenant on it, and waits until the gateway applies it: the
// plan must set requests_per_second, whose RateLimit-Policy field on the
// gateway's answers is the signal. It returns the tenant's owner client,
// the tenant and the plan's name.
func tenantOnPlan(t *testing.T, plan map[string]any) (*client.Client, *client.CreatedTenant, string) {
	t.Helper()
	limits, _ := plan["limits"].(map[string]any)
	require.Contains(t, limits, "requests_per_second", "the wait's signal")
	name := fmt.Sprintf("e2e-lim-%d-%d", time.Now().UnixNano()%1e9, tenantSeq.Add(1))
	body := map[string]any{"name": name, "currency": "USD"}
	for k, v := range plan {
		body[k] = v
	}
	r := callVia(t, shared.ops, http.MethodPost, shared.control+"/control/v1/plans", shared.operatorKey, body)
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	op := client.New(shared.control, shared.operatorKey, client.WithHTTPClient(shared.ops))
	ct, err := op.CreateTenantOnPlan(ctx(t), name, name)
	require.NoError(t, err)
	// The gateway reads the tenant's plan at its first request.
	eventually(t, 30*time.Second, func() bool {
		r := call(t, http.MethodGet, shared.gateway+"/api/v1/queues", ct.OwnerKey, nil)
		require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
		return r.Header.Get(wire.RateLimitPolicyHeader) != ""
	}, "the gateway applies the plan")
	return client.New(shared.gateway, ct.OwnerKey), ct, name
}

// max_schedules counts the tenant's schedules in all its namespaces: at
// the limit a create is a 429 quota_exceeded naming it, with Retry-After
// and the RateLimit fields; deleting one lets a new one in.
func TestPlanMaxSchedules(t *testing.T) {
	t.Parallel()
	owner, ct, name := tenantOnPlan(t, map[string]any{
		"limits": map[string]any{"max_schedules": 2, "requests_per_second": 10000},
	})
	_, err := owner.CreateNamespace(ctx(t), "second")
	require.NoError(t, err)

	create := func(ns, sched string) reply {
		return call(t, http.MethodPost, shared.gateway+"/api/v1/schedules", ct.OwnerKey,
			map[string]any{"name": sched, "queue": "reports", "cron": "0 3 * * *"}, wire.NamespaceHeader, ns)
	}
	r := create("default", "one")
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	r = create("second", "two")
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)

	r = create("default", "three")
	require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Raw)
	require.Equal(t, "quota_exceeded", r.code())
	msg, _ := r.Body["error"].(map[string]any)["message"].(string)
	require.Contains(t, msg, "max_schedules limit of 2")
	require.Contains(t, msg, fmt.Sprintf("%q", name))
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	require.Contains(t, r.Header.Get(wire.RateLimitPolicyHeader), `"rps";q=10000`)
	require.NotEmpty(t, r.Header.Get(wire.RateLimitHeader))
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/schedules", ct.OwnerKey, nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Len(t, r.Body["schedules"], 1, "the refused create stored nothing")

	// A replace is no create.
	r = call(t, http.MethodPut, shared.gateway+"/api/v1/schedules/one", ct.OwnerKey,
		map[string]any{"name": "one", "queue": "reports", "cron": "0 4 * * *"})
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)

	r = call(t, http.MethodDelete, shared.gateway+"/api/v1/schedules/two", ct.OwnerKey, nil, wire.NamespaceHeader, "second")
	require.Equal(t, http.StatusNoContent, r.Status, "body: %s", r.Raw)
	r = create("default", "three")
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	r = create("second", "four")
	require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Raw)
	require.Equal(t, "quota_exceeded", r.code())
}

// max_pending_jobs travels from the plan through the gateway to the
// shard, which refuses an enqueue that would take the namespace over
// it; what a client sends in the gateway's headers counts for nothing.
func TestPlanMaxPendingJobs(t *testing.T) {
	t.Parallel()
	forged := []string{wire.MaxPendingJobsHeader, "1000000", wire.FairWeightHeader, "1000"}
	_, ct, _ := tenantOnPlan(t, map[string]any{
		"limits": map[string]any{"max_pending_jobs": 3, "requests_per_second": 10000},
		"weight": 5,
	})
	enqueue := func() reply {
		return call(t, http.MethodPost, shared.gateway+"/api/v1/enqueue", ct.OwnerKey, map[string]any{"queue": "q", "payload": 1}, forged...)
	}
	for range 3 {
		r := enqueue()
		require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	}
	r := enqueue()
	require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Raw)
	require.Equal(t, "quota_exceeded", r.code())
	require.Contains(t, string(r.Raw), "max_pending_jobs")
	r = call(t, http.MethodPost, shared.gateway+"/api/v1/enqueue/batch", ct.OwnerKey,
		map[string]any{"jobs": []any{map[string]any{"queue": "q"}}}, forged...)
	require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Raw)

	// A finished job makes room for one more.
	r = call(t, http.MethodPost, shared.gateway+"/api/v1/fetch", ct.OwnerKey, map[string]any{"queues": []string{"q"}, "worker_id": "w", "timeout": 5})
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	id, _ := r.Body["job_id"].(string)
	require.NotEmpty(t, id, "body: %s", r.Raw)
	r = call(t, http.MethodPost, shared.gateway+"/api/v1/ack/"+id, ct.OwnerKey, map[string]any{"worker_id": "w"})
	require.Less(t, r.Status, 300, "body: %s", r.Raw)
	r = enqueue()
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	require.Equal(t, http.StatusTooManyRequests, enqueue().Status)
}

// A tenant on a plan without max_pending_jobs cannot give itself one, or
// any weight, by sending the gateway's headers: they never reach a shard.
func TestPlanHeadersAreTheGateways(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	for _, hdr := range [][]string{
		{wire.MaxPendingJobsHeader, "1"},
		{wire.MaxPendingJobsHeader, "not a number"},
		{wire.FairWeightHeader, "-1"},
		{wire.ShardNamespaceHeader, "t_other/default"},
	} {
		for range 2 {
			r := call(t, http.MethodPost, shared.gateway+"/api/v1/enqueue", ct.OwnerKey, map[string]any{"queue": "q", "payload": 1}, hdr...)
			require.Equal(t, http.StatusCreated, r.Status, "%v: %s", hdr, r.Raw)
		}
	}
	r := call(t, http.MethodGet, shared.gateway+"/api/v1/queues/q", ct.OwnerKey, nil)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	counts, _ := r.Body["counts"].(map[string]any)
	require.EqualValues(t, 8, counts["pending"], "every enqueue landed in the tenant's own namespace: %s", r.Raw)
}
