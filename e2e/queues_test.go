package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

func TestQueueManagementThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	for i := 0; i < 3; i++ {
		_, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "reports", Payload: i})
		require.NoError(t, err)
	}
	qs, err := owner.ListQueues(ctx(t))
	require.NoError(t, err)
	require.Len(t, qs, 1)
	require.Equal(t, "reports", qs[0].Name)
	require.EqualValues(t, 3, qs[0].Counts.Pending)

	// Paused: fetches get nothing, enqueues go on; resume wakes a parked fetch.
	q, err := owner.PauseQueue(ctx(t), "reports")
	require.NoError(t, err)
	require.True(t, q.Paused)
	_, err = owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "reports"})
	require.NoError(t, err)
	j, err := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"reports"}, WorkerID: "w", Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, j)
	parked := make(chan *client.Job, 1)
	go func() {
		j, _ := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"reports"}, WorkerID: "w", Timeout: 10 * time.Second})
		parked <- j
	}()
	time.Sleep(300 * time.Millisecond)
	_, err = owner.ResumeQueue(ctx(t), "reports")
	require.NoError(t, err)
	select {
	case j := <-parked:
		require.NotNil(t, j)
	case <-time.After(5 * time.Second):
		t.Fatal("resume did not wake the parked fetch")
	}

	// Concurrency 1: a second fetch waits until the first job is acked.
	q, err = owner.SetQueueConcurrency(ctx(t), "reports", 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, *q.Concurrency)
	// One job is active already (the parked fetch's): nothing more now.
	none, err := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"reports"}, WorkerID: "w", Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, none)
	_, err = owner.RemoveQueueConcurrency(ctx(t), "reports")
	require.NoError(t, err)

	q, err = owner.SetQueueThrottle(ctx(t), "reports", 100, time.Minute)
	require.NoError(t, err)
	require.Equal(t, "1m", q.Throttle.Period)
	q, err = owner.RemoveQueueThrottle(ctx(t), "reports")
	require.NoError(t, err)
	require.Nil(t, q.Throttle)

	two := 2
	q, err = owner.SetQueueDefaults(ctx(t), "reports", client.QueueDefaults{MaxRetries: &two})
	require.NoError(t, err)
	require.Equal(t, 2, *q.Defaults.MaxRetries)
	res, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "reports"})
	require.NoError(t, err)
	d, err := owner.GetJob(ctx(t), res.JobID)
	require.NoError(t, err)
	require.Equal(t, 2, d.MaxRetries)

	dr, err := owner.DrainQueue(ctx(t), "reports")
	require.NoError(t, err)
	require.EqualValues(t, 1, dr.Active)
	n, err := owner.ClearQueue(ctx(t), "reports")
	require.NoError(t, err)
	require.Equal(t, 4, n)

	g := shared.gateway + "/api/v1"
	r := call(t, "DELETE", g+"/queues/reports", ct.OwnerKey, nil)
	require.Equal(t, 400, r.Status)
	n, err = owner.DeleteQueue(ctx(t), "reports")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = owner.GetQueue(ctx(t), "reports")
	require.True(t, client.IsNotFound(err), "%v", err)
}

func TestQueueIsolationAndRoles(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	_, ctB := shared.tenant(t)
	_, err := a.Enqueue(ctx(t), client.EnqueueRequest{Queue: "secret"})
	require.NoError(t, err)
	g := shared.gateway + "/api/v1"

	// Tenant B: A's queue is not there, for every operation.
	for _, c := range []struct{ method, path string }{
		{"GET", "/queues/secret"},
		{"POST", "/queues/secret/resume"},
		{"POST", "/queues/secret/drain"},
		{"POST", "/queues/secret/clear"},
		{"DELETE", "/queues/secret?confirm=true"},
		{"DELETE", "/queues/secret/throttle"},
		{"DELETE", "/queues/secret/concurrency"},
	} {
		r := call(t, c.method, g+c.path, ctB.OwnerKey, nil)
		require.Equal(t, 404, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
	}
	r := call(t, "GET", g+"/queues", ctB.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Empty(t, r.Body["queues"])
	// B pausing "secret" makes a queue in B's namespace; A's is untouched.
	r = call(t, "POST", g+"/queues/secret/pause", ctB.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	q, err := a.GetQueue(ctx(t), "secret")
	require.NoError(t, err)
	require.False(t, q.Paused)
	require.EqualValues(t, 1, q.Counts.Pending)

	// Roles: a producer may read queues but not pause them.
	prod, err := a.CreateKey(ctx(t), clientKey("p", tenancy.RoleProducer, "default"))
	require.NoError(t, err)
	r = call(t, "POST", g+"/queues/secret/pause", prod.Token, nil)
	require.Equal(t, 403, r.Status)
	r = call(t, "GET", g+"/queues/secret", prod.Token, nil)
	require.Equal(t, 200, r.Status)
	r = call(t, "GET", g+"/queues", "", nil)
	require.Equal(t, 401, r.Status)
	r = call(t, "POST", g+"/queues/secret/throttle", ctA.OwnerKey, map[string]any{"rate": 0, "period": "1m"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "rate", r.Body["error"].(map[string]any)["field"])
}
