package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// fillEvents enqueues n jobs through c, 500 per batch, and returns their
// ids in order: one enqueued event each.
func fillEvents(t *testing.T, c *client.Client, n int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		jobs := make([]client.EnqueueRequest, min(n-len(ids), 500))
		for i := range jobs {
			jobs[i] = client.EnqueueRequest{Queue: "ev", Payload: len(ids) + i}
		}
		res, err := c.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: jobs})
		require.NoError(t, err)
		ids = append(ids, res.JobIDs...)
	}
	return ids
}

// oldestEvent is the job of the oldest event c's namespace keeps: a
// resume from an id of another shard starts there, marked missed.
func oldestEvent(t *testing.T, c *client.Client) string {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	evs, err := c.Events(sctx, "elsewhere:0")
	require.NoError(t, err)
	ev := nextEvent(t, evs)
	require.True(t, ev.Missed)
	return ev.JobID
}

// A plan's event_retention_events goes from control through the gateway
// to the shard, whose leader trims the tenant's log to it, while a
// tenant on the default plan keeps every one of the same number of
// events.
func TestPlanEventRetention(t *testing.T) {
	t.Parallel()
	small, _, _ := tenantOnPlan(t, map[string]any{
		"limits": map[string]any{"event_retention_events": 1000, "event_retention_hours": 2, "requests_per_second": 10000},
	})
	standard, _ := shared.tenant(t)
	mine := fillEvents(t, small, 1500)
	theirs := fillEvents(t, standard, 1500)
	eventually(t, 60*time.Second, func() bool {
		if oldestEvent(t, small) == mine[500] {
			return true
		}
		time.Sleep(time.Second) // the leader trims every 10 s; each look opens a stream
		return false
	}, "the small plan's namespace keeps its 1,000 newest events")
	require.Equal(t, theirs[0], oldestEvent(t, standard), "the default plan keeps all 1,500")
}
