package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A typed queue through the gateway: its schema is set with the queue's
// configuration, every enqueue path refuses a payload it refuses with
// the JSON pointer (nothing stored), a client that does not know schemas
// puts the queue back without erasing it, and another tenant's queue of
// the same name knows nothing of it.
func TestTypedQueueThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	rival, rt := shared.tenant(t)
	g := shared.gateway + "/api/v1"
	schema := map[string]any{"type": "object", "required": []any{"amount"},
		"properties": map[string]any{"amount": map[string]any{"type": "integer", "minimum": 0}}}
	r := call(t, "PUT", g+"/queues/payments", ct.OwnerKey, map[string]any{"description": "typed", "schema": schema})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 1, r.Body["schema_version"])

	field := func(r reply) string {
		t.Helper()
		require.Equal(t, 400, r.Status, string(r.Raw))
		return r.Body["error"].(map[string]any)["field"].(string)
	}
	bad := map[string]any{"amount": -1}
	require.Equal(t, "payload/amount", field(call(t, "POST", g+"/enqueue", ct.OwnerKey, map[string]any{"queue": "payments", "payload": bad})))
	require.Equal(t, "jobs[1].payload/amount", field(call(t, "POST", g+"/enqueue/batch", ct.OwnerKey, map[string]any{"jobs": []any{
		map[string]any{"queue": "payments", "payload": map[string]any{"amount": 1}}, map[string]any{"queue": "payments", "payload": bad}}})))
	require.Equal(t, "chain.steps[1].payload/amount", field(call(t, "POST", g+"/enqueue", ct.OwnerKey, map[string]any{"queue": "plain",
		"chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "payments", "payload": bad}}}})))
	require.Equal(t, "payload/amount", field(call(t, "POST", g+"/schedules", ct.OwnerKey,
		map[string]any{"name": "s", "queue": "payments", "cron": "@hourly", "payload": bad})))
	res, err := owner.Search(ctx(t), client.SearchRequest{})
	require.NoError(t, err)
	require.Empty(t, res.Jobs, "nothing of a refused request is stored")

	enq, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "payments", Payload: map[string]any{"amount": 5}})
	require.NoError(t, err)
	r = call(t, "GET", g+"/jobs/"+enq.JobID, ct.OwnerKey, nil)
	require.EqualValues(t, 1, r.Body["schema_version"], string(r.Raw))

	// The Go client's read-modify-write puts the schema back as it read it:
	// the same version.
	q, err := owner.GetQueue(ctx(t), "payments")
	require.NoError(t, err)
	spec, err := client.QueueSpecOf(q)
	require.NoError(t, err)
	spec.Description = "changed"
	q, err = owner.PutQueue(ctx(t), "payments", spec)
	require.NoError(t, err)
	require.EqualValues(t, 1, q.SchemaVersion)
	require.JSONEq(t, `{"properties":{"amount":{"minimum":0,"type":"integer"}},"required":["amount"],"type":"object"}`, string(q.Schema))

	// Another tenant: its own queue of that name takes anything.
	_, err = rival.Enqueue(ctx(t), client.EnqueueRequest{Queue: "payments", Payload: bad})
	require.NoError(t, err)
	r = call(t, "GET", g+"/queues/payments", rt.OwnerKey, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Nil(t, r.Body["schema"])
}
