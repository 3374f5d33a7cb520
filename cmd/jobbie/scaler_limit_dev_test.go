package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// requireScale checks GET /api/v1/queues/{name}/scale's answer against
// want (its oldest pending age aside) and what KEDA reads of it through
// the trigger md: the metric is the route's demand, and IsActive active.
func requireScale(t *testing.T, owner *client.Client, keda kedaClient, md map[string]string, want wire.QueueScale, active bool) {
	t.Helper()
	ctx := context.Background()
	sc, err := owner.QueueScale(ctx, want.Queue)
	require.NoError(t, err)
	want.OldestPendingAge = sc.OldestPendingAge
	require.Equal(t, want, *sc)
	got, err := keda.metric(ctx, md, "jobbie-"+strings.ReplaceAll(want.Queue, ".", "-"))
	require.NoError(t, err)
	require.Equal(t, want.Demand, got, "KEDA's metric is the route's demand")
	on, err := keda.isActive(ctx, md)
	require.NoError(t, err)
	require.Equal(t, active, on)
}

// A queue's concurrency limit caps its demand: pending jobs beyond the
// limit's room would have KEDA start workers that get nothing. A
// throttle does not: workers drain its backlog at its rate.
func TestKEDAScalerConcurrencyLimit(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	owner := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	t.Cleanup(owner.CloseIdleConnections)
	keda := dialKEDA(t, d.grpc)
	const queue = "reports"
	md := map[string]string{"queue": queue, "apiKey": readKey(t, filepath.Join(d.dir, "owner.key")), "targetDemandPerReplica": "5"}
	_, err := owner.SetQueueConcurrency(ctx, queue, 3)
	require.NoError(t, err)
	for range 20 {
		_, err := owner.Enqueue(ctx, client.EnqueueRequest{Queue: queue})
		require.NoError(t, err)
	}
	scale := func(backlog, inFlight, demand int64, limited string) {
		t.Helper()
		requireScale(t, owner, keda, md, wire.QueueScale{Queue: queue, Backlog: backlog, InFlight: inFlight,
			Demand: demand, LimitedBy: limited}, true)
	}
	scale(20, 0, 3, wire.ScaleLimitedConcurrency) // 3 may run, not 20

	held, err := owner.Fetch(ctx, client.FetchRequest{Queues: []string{queue}, WorkerID: "w1", Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, held)
	scale(19, 1, 3, wire.ScaleLimitedConcurrency) // one in flight, room for two more

	_, err = owner.SetQueueConcurrency(ctx, queue, 1)
	require.NoError(t, err)
	scale(19, 1, 1, wire.ScaleLimitedConcurrency) // at the limit: the job in flight alone

	_, err = owner.PauseQueue(ctx, queue)
	require.NoError(t, err)
	requireScale(t, owner, keda, md, wire.QueueScale{Queue: queue, Backlog: 19, InFlight: 1, Demand: 1,
		Paused: true, LimitedBy: wire.ScaleLimitedPaused}, true)
	_, err = owner.ResumeQueue(ctx, queue)
	require.NoError(t, err)

	_, err = owner.SetQueueConcurrency(ctx, queue, 50)
	require.NoError(t, err)
	scale(19, 1, 20, "") // room for all: nothing held out

	_, err = owner.RemoveQueueConcurrency(ctx, queue)
	require.NoError(t, err)
	_, err = owner.SetQueueThrottle(ctx, queue, 1, time.Hour)
	require.NoError(t, err)
	scale(19, 1, 20, "") // a throttle lets them all out in time

	require.NoError(t, owner.Ack(ctx, held.ID, nil, client.Lease(held.LeaseToken)))
	_, err = owner.RemoveQueueThrottle(ctx, queue)
	require.NoError(t, err)
	_, err = owner.SetQueueConcurrency(ctx, queue, 2)
	require.NoError(t, err)
	scale(19, 0, 2, wire.ScaleLimitedConcurrency) // nothing in flight: the limit's whole room
}
