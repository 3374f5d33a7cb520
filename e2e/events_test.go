package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// nextEvent waits for the stream's next event.
func nextEvent(t *testing.T, evs <-chan client.Event) client.Event {
	t.Helper()
	select {
	case ev, ok := <-evs:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return client.Event{}
}

func TestEventsStreamThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	other, _ := shared.tenant(t)
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs, err := owner.Events(sctx, "")
	require.NoError(t, err)
	theirs, err := other.Events(sctx, "")
	require.NoError(t, err)

	w := owner.ForWorker("w-events")
	res, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "emails", Payload: map[string]any{"n": 1}})
	require.NoError(t, err)
	j, err := w.Fetch(ctx(t), client.FetchRequest{Queues: []string{"emails"}, Hostname: "host-e", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.Equal(t, res.JobID, j.ID)
	require.NoError(t, w.Ack(ctx(t), j.ID, map[string]any{"ok": true}))

	var got []client.Event
	for _, want := range []string{"enqueued", "started", "completed"} {
		ev := nextEvent(t, evs)
		require.Equal(t, want, ev.Type)
		require.Equal(t, res.JobID, ev.JobID)
		require.Equal(t, "emails", ev.Queue)
		require.NotEmpty(t, ev.ID)
		got = append(got, ev)
	}
	require.Equal(t, "pending", got[0].State)
	require.Equal(t, "active", got[1].State)
	require.Equal(t, "w-events", got[1].WorkerID)
	require.Equal(t, "completed", got[2].State)

	// Resume after the first event: the other two again, in order.
	resumed, err := owner.Events(sctx, got[0].ID)
	require.NoError(t, err)
	require.Equal(t, got[1].ID, nextEvent(t, resumed).ID)
	again := nextEvent(t, resumed)
	require.Equal(t, got[2].ID, again.ID)
	require.False(t, again.Missed)

	// The other tenant's stream saw none of it: its first event is its own.
	mine, err := other.Enqueue(ctx(t), client.EnqueueRequest{Queue: "sms", Payload: 1})
	require.NoError(t, err)
	ev := nextEvent(t, theirs)
	require.Equal(t, mine.JobID, ev.JobID)
	require.Equal(t, "sms", ev.Queue)
}

func TestEventsStreamRolesAndNamespaces(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	_, err := owner.CreateNamespace(ctx(t), "emails")
	require.NoError(t, err)
	producer, err := owner.CreateKey(ctx(t), clientKey("p", tenancy.RoleProducer, "emails"))
	require.NoError(t, err)
	billing, err := owner.CreateKey(ctx(t), clientKey("b", tenancy.RoleBilling, "emails"))
	require.NoError(t, err)

	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := client.New(shared.gateway, producer.Token)
	evs, err := p.Events(sctx, "")
	require.NoError(t, err, "a producer may read its namespace's events")
	res, err := p.Enqueue(ctx(t), client.EnqueueRequest{Queue: "send", Payload: 1})
	require.NoError(t, err)
	require.Equal(t, res.JobID, nextEvent(t, evs).JobID)

	_, err = p.WithNamespace("default").Events(sctx, "")
	require.True(t, client.IsForbidden(err), "a key limited to emails cannot stream default: %v", err)
	_, err = client.New(shared.gateway, billing.Token).Events(sctx, "")
	require.True(t, client.IsForbidden(err), "billing may not read jobs: %v", err)
	_, err = client.New(shared.gateway, "").Events(sctx, "")
	require.Error(t, err)
}

func TestWorkersListedAfterAFetch(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	other, _ := shared.tenant(t)
	res, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "reports", Payload: 1})
	require.NoError(t, err)
	w := owner.ForWorker("w-list")
	j, err := w.Fetch(ctx(t), client.FetchRequest{Queues: []string{"reports", "exports"}, Hostname: "box-1", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.Equal(t, res.JobID, j.ID)

	ws, err := owner.ListWorkers(ctx(t))
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.Equal(t, "w-list", ws[0].ID)
	require.Equal(t, "box-1", ws[0].Hostname)
	require.Equal(t, []string{"reports", "exports"}, ws[0].Queues)
	require.Equal(t, 1, ws[0].ActiveJobs)
	require.Equal(t, []string{j.ID}, ws[0].ActiveJobIDs)
	require.Equal(t, "active", ws[0].Status)
	require.WithinDuration(t, time.Now(), ws[0].LastSeen, time.Minute)

	require.NoError(t, w.Ack(ctx(t), j.ID, nil))
	ws, err = owner.ListWorkers(ctx(t))
	require.NoError(t, err)
	require.Zero(t, ws[0].ActiveJobs)

	theirs, err := other.ListWorkers(ctx(t))
	require.NoError(t, err)
	require.Empty(t, theirs, "another tenant sees none of them")
}
