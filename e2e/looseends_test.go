package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// Input the API took and got wrong: each is refused through the gateway
// with 400 naming the field, and nothing is created.
func TestOutOfRangeInputIsRefused(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	g := shared.gateway + "/api/v1"
	for _, tc := range []struct {
		path, body, field string
	}{
		{"/enqueue", `{"queue":"q","scheduled_at":"9999-12-31T23:59:59Z"}`, "scheduled_at"},
		{"/enqueue", `{"queue":"q","unique_key":"k","unique_period":18446744074}`, "unique_period"},
		{"/enqueue", "{\"queue\":\"q\",\"payload\":\"caf\xe9\"}", "payload"},
		{"/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q"},{"queue":"s","max_retries":-1}]}}`, "chain.steps[1].max_retries"},
		{"/schedules", `{"name":"zero","queue":"q","cron":"@every 0s"}`, "cron"},
		{"/schedules", `{"name":"negative","queue":"q","cron":"@every -1s"}`, "cron"},
		{"/schedules", `{"name":"tiny","queue":"q","cron":"@every 1ns"}`, "cron"},
	} {
		r := call(t, "POST", g+tc.path, ct.OwnerKey, []byte(tc.body))
		require.Equal(t, 400, r.Status, "%s: %s", tc.body, r.Raw)
		require.Equal(t, tc.field, r.field(), "%s: %s", tc.body, r.Raw)
	}
	found, err := c.Search(ctx(t), client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "q"}})
	require.NoError(t, err)
	require.Empty(t, found.Jobs, "nothing was enqueued")
	scheds, err := c.ListSchedules(ctx(t))
	require.NoError(t, err)
	require.Empty(t, scheds, "no schedule was made")
}

// Deleting a job others wait on settles them; clear takes retrying jobs.
func TestDeletesAndClearSettleWhatWaits(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	dep, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "dep"})
	require.NoError(t, err)
	held, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "held", DependsOn: []string{dep.JobID}})
	require.NoError(t, err)
	require.Equal(t, client.StateHeld, held.Status)
	require.NoError(t, c.DeleteJob(ctx(t), dep.JobID))
	d := requireState(t, c, held.JobID, client.StateCancelled)
	require.Equal(t, "dependency_failed", d.CancelReason)

	r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "clear", RetryBackoff: client.BackoffFixed, RetryBaseDelay: time.Hour})
	require.NoError(t, err)
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"clear"}, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.Equal(t, r.JobID, j.ID)
	out, err := c.Fail(ctx(t), j.ID, "later", "")
	require.NoError(t, err)
	require.Equal(t, client.StateRetrying, out.Status)
	cleared, err := c.ClearQueue(ctx(t), "clear")
	require.NoError(t, err)
	require.Equal(t, 1, cleared)
	_, err = c.GetJob(ctx(t), r.JobID)
	require.True(t, client.IsNotFound(err), "%v", err)
}
