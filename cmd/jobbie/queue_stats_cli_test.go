package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// statsTotals adds up a history's buckets (the jobs of a test may fall in
// two steps when it crosses a minute).
type statsTotals struct{ enqueued, completed, failed, dead, attempts, maxPending int64 }

func totalsOf(st *client.QueueStats) statsTotals {
	var s statsTotals
	for _, b := range st.Buckets {
		s.enqueued += b.Enqueued
		s.completed += b.Completed
		s.failed += b.Failed
		s.dead += b.Dead
		s.attempts += b.ProcessingTime.Count
		s.maxPending = max(s.maxPending, b.Pending)
	}
	return s
}

// A queue's history and scale through the Go SDK and `jobbie queues
// stats|scale` against jobbie dev: the counts after enqueue, ack and a
// fail to dead; the depth the leader samples; demand never 0 while a job
// is leased; bad flags refused before any request, naming the flag; and
// another tenant's queue not found.
func TestQueueStatsAndScaleAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	const queue = "emails.send"
	never := 0
	for range 4 {
		_, err := d.owner.Enqueue(ctx, client.EnqueueRequest{Queue: queue, MaxRetries: &never})
		require.NoError(t, err)
	}
	fetch := func() *client.Job {
		t.Helper()
		j, err := d.owner.Fetch(ctx, client.FetchRequest{Queues: []string{queue}, WorkerID: "w1", Timeout: 10 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		return j
	}
	a := fetch()
	require.NoError(t, d.owner.Ack(ctx, a.ID, nil, client.Lease(a.LeaseToken)))
	b := fetch()
	_, err := d.owner.Fail(ctx, b.ID, "smtp down", "", client.Lease(b.LeaseToken))
	require.NoError(t, err)
	held := fetch() // one in flight, one pending

	sc, err := d.owner.QueueScale(ctx, queue)
	require.NoError(t, err)
	require.Equal(t, wire.QueueScale{Queue: queue, Backlog: 1, InFlight: 1, Demand: 2, OldestPendingAge: sc.OldestPendingAge}, *sc)
	require.Positive(t, sc.OldestPendingAge)
	out := d.run(t, "queues", "scale", queue)
	require.Equal(t, "1", clitest.Field(out, "BACKLOG"), out)
	require.Equal(t, "1", clitest.Field(out, "IN FLIGHT"), out)
	require.Equal(t, "2", clitest.Field(out, "DEMAND"), out)
	require.Equal(t, "false", clitest.Field(out, "PAUSED"), out)
	require.Equal(t, "-", clitest.Field(out, "LIMITED BY"), out)
	_, err = d.owner.SetQueueConcurrency(ctx, queue, 1)
	require.NoError(t, err)
	out = d.run(t, "queues", "scale", queue)
	require.Equal(t, "1", clitest.Field(out, "DEMAND"), out, "at its limit of 1: the job in flight alone")
	require.Equal(t, "concurrency", clitest.Field(out, "LIMITED BY"), out)
	_, err = d.owner.RemoveQueueConcurrency(ctx, queue)
	require.NoError(t, err)
	var scJSON wire.QueueScale
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "queues", "scale", queue, "-o", "json")), &scJSON))
	require.Equal(t, int64(2), scJSON.Demand)

	want := statsTotals{enqueued: 4, completed: 1, failed: 1, dead: 1, attempts: 2}
	st, err := d.owner.QueueStats(ctx, queue, client.StatsQuery{})
	require.NoError(t, err)
	require.Equal(t, client.StatsStepMinute, st.Step)
	require.Len(t, st.Buckets, 60, "an hour of minutes by default")
	got := totalsOf(st)
	got.maxPending = 0 // sampled: checked below
	require.Equal(t, want, got)
	for _, b := range st.Buckets {
		if b.ProcessingTime.Count > 0 {
			require.Positive(t, b.ProcessingTime.P50)
			require.GreaterOrEqual(t, b.ProcessingTime.P99, b.ProcessingTime.P50)
		}
	}

	// The table: a row per minute whose columns add up to the same.
	out = d.run(t, "queues", "stats", queue)
	rows := clitest.TableLines(out)
	require.Equal(t, []string{"TIME", "ENQUEUED", "COMPLETED", "FAILED", "DEAD", "PENDING", "OLDEST", "PENDING", "P50", "P95", "P99"}, rows[1], out)
	var enq, done, attempts int64
	for _, r := range rows[2:] {
		require.Len(t, r, 10, "%v", r)
		_, err := time.Parse("2006-01-02T15:04Z", r[0])
		require.NoError(t, err, "%v", r)
		n, err := strconv.ParseInt(r[1], 10, 64)
		require.NoError(t, err)
		enq += n
		n, err = strconv.ParseInt(r[2], 10, 64)
		require.NoError(t, err)
		done += n
		if r[7] != "-" {
			_, err := time.ParseDuration(r[7])
			require.NoError(t, err, "%v", r)
			attempts++
		}
	}
	require.Len(t, rows, 62, out)
	require.Equal(t, int64(4), enq, out)
	require.Equal(t, int64(1), done, out)
	require.Positive(t, attempts, out)

	// The leader samples the depth every 15 s: wait for the sample that
	// sees the pending job (generous for a loaded machine).
	deadline := time.Now().Add(90 * time.Second)
	for {
		var js client.QueueStats
		require.NoError(t, json.Unmarshal([]byte(d.run(t, "queues", "stats", queue, "-o", "json")), &js))
		if totalsOf(&js).maxPending == 1 {
			break
		}
		require.False(t, time.Now().After(deadline), "no depth sample of the pending job: %+v", js.Buckets)
		time.Sleep(250 * time.Millisecond)
	}

	// Hour steps: the same counts over the last 3 hours.
	st, err = d.owner.QueueStats(ctx, queue, client.StatsQuery{From: time.Now().Add(-3 * time.Hour), Step: client.StatsStepHour})
	require.NoError(t, err)
	require.Equal(t, client.StatsStepHour, st.Step)
	require.Contains(t, []int{3, 4}, len(st.Buckets))
	require.Equal(t, int64(4), totalsOf(st).enqueued)
	require.Contains(t, d.run(t, "queues", "stats", queue, "--step", "1h", "--from", "3h", "-o", "yaml"), "step: 1h")

	// The last job leased and nothing pending: demand is still 1.
	require.NoError(t, d.owner.Ack(ctx, held.ID, nil, client.Lease(held.LeaseToken)))
	last := fetch()
	sc, err = d.owner.QueueScale(ctx, queue)
	require.NoError(t, err)
	require.Equal(t, wire.QueueScale{Queue: queue, InFlight: 1, Demand: 1}, *sc)
	require.NoError(t, d.owner.Ack(ctx, last.ID, nil, client.Lease(last.LeaseToken)))
	sc, err = d.owner.QueueScale(ctx, queue)
	require.NoError(t, err)
	require.Equal(t, int64(0), sc.Demand)

	// A viewer reads both.
	viewer := d.keyFile(t, "v", "viewer")
	_, err = d.as(t, viewer, "queues", "stats", queue)
	require.NoError(t, err)
	_, err = d.as(t, viewer, "queues", "scale", queue)
	require.NoError(t, err)

	t.Run("BadFlags", func(t *testing.T) {
		// Nothing listens on port 1: an error that names the flag was
		// given before any request.
		for _, tc := range []struct {
			args []string
			flag string
		}{
			{[]string{"--step", "2m"}, "--step"},
			{[]string{"--from", "72h"}, "--from"}, // over the 48 hours minutes are kept
			{[]string{"--step", "1h", "--from", "2026-01-01", "--to", "2026-03-01"}, "--from"},
			{[]string{"--from", "1h", "--to", "2h"}, "--to"},
			{[]string{"--from", "yesterday"}, "--from"},
			{[]string{"--to", "-5m"}, "--to"},
		} {
			_, _, err := runJobbie(t, "", append([]string{"queues", "stats", queue, "--url", "http://127.0.0.1:1", "--key", "k"}, tc.args...)...)
			require.Error(t, err, "%v", tc.args)
			require.Contains(t, err.Error(), tc.flag, "%v", tc.args)
			require.NotContains(t, err.Error(), "127.0.0.1:1", "%v: a request was made", tc.args)
		}
		_, _, err := runJobbie(t, "", "queues", "scale", "-bad", "--url", "http://127.0.0.1:1", "--key", "k")
		require.Error(t, err)
		require.NotContains(t, err.Error(), "127.0.0.1:1")
		_, _, err = runJobbie(t, "", "queues", "stats", queue, "extra", "--url", "http://127.0.0.1:1", "--key", "k")
		require.ErrorContains(t, err, "takes 1 argument")
	})

	t.Run("NotFound", func(t *testing.T) {
		_, err := d.owner.QueueStats(ctx, "never.used", client.StatsQuery{})
		require.True(t, client.IsNotFound(err), "%v", err)
		_, err = d.owner.QueueScale(ctx, "never.used")
		require.True(t, client.IsNotFound(err), "%v", err)

		var other wire.CreatedTenant
		require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "other", "-o", "json")), &other))
		theirs := client.New(d.gateway, other.OwnerKey)
		t.Cleanup(theirs.CloseIdleConnections)
		_, err = theirs.QueueStats(ctx, queue, client.StatsQuery{})
		require.True(t, client.IsNotFound(err), "another tenant's queue: %v", err)
		_, err = theirs.QueueScale(ctx, queue)
		require.True(t, client.IsNotFound(err), "another tenant's queue: %v", err)
		_, err = theirs.WithNamespace("default").QueueStats(ctx, queue, client.StatsQuery{})
		require.True(t, client.IsNotFound(err), "another tenant's namespace: %v", err)
		otherFile := clitest.KeyFile(t, other.OwnerKey)
		for _, cmd := range []string{"stats", "scale"} {
			_, err = d.as(t, otherFile, "queues", cmd, queue)
			require.True(t, client.IsNotFound(err), "%s: %v", cmd, err)
		}
	})
}
