package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// Cancelling a running job reaches its worker through the heartbeat, and
// the worker's ack settles it as cancelled; retry, move, delete and the
// dead listing work through the gateway.
func TestJobOperationsThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)

	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "ops.run"})
	require.NoError(t, err)
	id := res.JobID
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"ops.run"}, WorkerID: "w1", Timeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, id, j.ID)
	st, err := c.CancelJob(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, client.CancelRequesting, st)
	hb, err := c.ForWorker("w1").Heartbeat(ctx(t), map[string]client.HeartbeatJob{id: {}})
	require.NoError(t, err)
	require.True(t, hb.Cancelled(id))
	require.NoError(t, c.ForWorker("w1").Ack(ctx(t), id, nil))
	d, err := c.GetJob(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, client.StateCancelled, d.State)
	var evs []string
	for _, e := range d.Timeline {
		evs = append(evs, e.Event)
	}
	require.Equal(t, []string{"enqueued", "started", "cancel_requested", "cancelled"}, evs)

	// Retry the cancelled job, move it, and let it die; it is listed dead.
	r, err := c.RetryJob(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, client.StatePending, r.Status)
	_, err = c.MoveJob(ctx(t), id, "ops.other")
	require.NoError(t, err)
	_, err = c.RetryJob(ctx(t), id)
	require.True(t, client.IsConflict(err), "%v", err)
	zero := 0
	dead, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "ops.dead", MaxRetries: &zero})
	require.NoError(t, err)
	_, err = c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"ops.dead"}, WorkerID: "w1", Timeout: time.Second})
	require.NoError(t, err)
	_, err = c.Fail(ctx(t), dead.JobID, "boom", "")
	require.NoError(t, err)
	page, err := c.ListDead(ctx(t), client.DeadQuery{Queue: "ops.dead"})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, dead.JobID, page.Jobs[0].ID)
	require.NotNil(t, page.Jobs[0].LastError)
	require.Equal(t, "boom", *page.Jobs[0].LastError)
	dd, err := c.GetJob(ctx(t), dead.JobID)
	require.NoError(t, err)
	require.Equal(t, "retries_exhausted", dd.DeadReason)

	// Delete: the job is gone and nothing is fetched.
	require.NoError(t, c.DeleteJob(ctx(t), id))
	_, err = c.GetJob(ctx(t), id)
	require.True(t, client.IsNotFound(err), "%v", err)
	got, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"ops.other"}, WorkerID: "w1", Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, got)
}

func TestJobOperationsIsolationAndRoles(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	_, ctB := shared.tenant(t)
	res, err := a.Enqueue(ctx(t), client.EnqueueRequest{Queue: "ops.secret"})
	require.NoError(t, err)
	id := res.JobID
	g := shared.gateway + "/api/v1"

	for _, op := range []struct{ method, path string }{
		{"POST", "/jobs/" + id + "/retry"}, {"POST", "/jobs/" + id + "/cancel"},
		{"POST", "/jobs/" + id + "/move"}, {"DELETE", "/jobs/" + id}, {"GET", "/jobs/" + id},
	} {
		var body any
		if op.path == "/jobs/"+id+"/move" {
			body = map[string]string{"queue": "x"}
		}
		r := call(t, op.method, g+op.path, ctB.OwnerKey, body)
		require.Equal(t, 404, r.Status, "%s %s: %s", op.method, op.path, r.Raw)
	}
	r := call(t, "GET", g+"/dead", ctB.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Empty(t, r.Body["jobs"])
	d, err := a.GetJob(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, "pending", d.State, "B changed nothing")

	worker, err := a.CreateKey(ctx(t), clientKey("w", tenancy.RoleWorker, "default"))
	require.NoError(t, err)
	r = call(t, "POST", g+"/jobs/"+id+"/cancel", worker.Token, nil)
	require.Equal(t, 403, r.Status)
	r = call(t, "DELETE", g+"/jobs/"+id, worker.Token, nil)
	require.Equal(t, 403, r.Status)
	r = call(t, "GET", g+"/dead", worker.Token, nil)
	require.Equal(t, 200, r.Status, "reading dead jobs needs job.read")
	r = call(t, "GET", g+"/dead?limit=5000", ctA.OwnerKey, nil)
	require.Equal(t, 400, r.Status)
	r = call(t, "POST", g+"/jobs/"+id+"/move", ctA.OwnerKey, map[string]string{})
	require.Equal(t, 400, r.Status)
	r = call(t, "POST", g+"/jobs/"+id+"/cancel", "", nil)
	require.Equal(t, 401, r.Status)
}
