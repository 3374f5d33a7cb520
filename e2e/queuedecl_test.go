package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// A queue's whole configuration is put in one call through the gateway and
// reads back as it was put; each tenant's queue of the same name is its own.
func TestDeclarativeQueuesThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	rival, _ := shared.tenant(t)
	five, two := int64(5), 2
	spec := client.QueueSpec{Description: "Outbound email", Paused: true, Concurrency: &five,
		Throttle: &client.QueueThrottleSpec{Rate: 100, Period: time.Minute},
		Defaults: client.QueueDefaultsSpec{MaxRetries: &two, RetryBackoff: "linear", RetryBaseDelay: 90 * time.Second,
			LeaseDuration: 5 * time.Minute, ExpireAfter: 24 * time.Hour, Retention: 72 * time.Hour}}
	q, err := owner.PutQueue(ctx(t), "emails", spec)
	require.NoError(t, err)
	require.Equal(t, "emails", q.Name)
	got, err := owner.GetQueue(ctx(t), "emails")
	require.NoError(t, err)
	back, err := client.QueueSpecOf(got)
	require.NoError(t, err)
	require.Equal(t, spec, back, "a read after a write has no diff")
	_, err = owner.PutQueue(ctx(t), "emails", back)
	require.NoError(t, err, "putting what was read again is fine")

	// Over raw HTTP, "60s" and seconds read back in the canonical form.
	g := shared.gateway + "/api/v1"
	r := call(t, "PUT", g+"/queues/reports", ct.OwnerKey, map[string]any{"throttle": map[string]any{"rate": 3, "period": "60s"},
		"defaults": map[string]any{"retry_base_delay": 90, "expire_after": "3600s"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = call(t, "GET", g+"/queues/reports", ct.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, map[string]any{"rate": 3.0, "period": "1m"}, r.Body["throttle"])
	d := r.Body["defaults"].(map[string]any)
	require.Equal(t, "1m30s", d["retry_base_delay"])
	require.Equal(t, "1h", d["expire_after"])
	require.Nil(t, d["max_retries"])
	require.Equal(t, "", r.Body["description"])
	require.Equal(t, false, r.Body["paused"])
	r = call(t, "PUT", g+"/queues/reports", ct.OwnerKey, map[string]any{"throttle": map[string]any{"rate": 3, "period": "1ms"}})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "throttle.period", r.Body["error"].(map[string]any)["field"])

	// Another tenant sees no queue of that name until it puts its own,
	// and each reads its own.
	_, err = rival.GetQueue(ctx(t), "emails")
	require.True(t, client.IsNotFound(err), "%v", err)
	theirs, err := rival.PutQueue(ctx(t), "emails", client.QueueSpec{Description: "theirs"})
	require.NoError(t, err)
	require.Equal(t, "theirs", theirs.Description)
	require.False(t, theirs.Paused)
	mine, err := owner.GetQueue(ctx(t), "emails")
	require.NoError(t, err)
	require.Equal(t, "Outbound email", mine.Description)
	require.True(t, mine.Paused)

	// A queue known only from its jobs reads with no settings.
	_, err = owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "implicit"})
	require.NoError(t, err)
	imp, err := owner.GetQueue(ctx(t), "implicit")
	require.NoError(t, err)
	s, err := client.QueueSpecOf(imp)
	require.NoError(t, err)
	require.Equal(t, client.QueueSpec{}, s)

	// A producer key may not configure a queue; a viewer may read it only.
	producer, err := owner.CreateKey(ctx(t), clientKey("p", tenancy.RoleProducer))
	require.NoError(t, err)
	viewer, err := owner.CreateKey(ctx(t), clientKey("v", tenancy.RoleViewer))
	require.NoError(t, err)
	r = call(t, "PUT", g+"/queues/emails", producer.Token, map[string]any{})
	require.Equal(t, 403, r.Status, string(r.Raw))
	r = call(t, "PUT", g+"/queues/emails", viewer.Token, map[string]any{})
	require.Equal(t, 403, r.Status, string(r.Raw))
	r = call(t, "GET", g+"/queues/emails", viewer.Token, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "Outbound email", r.Body["description"], "the refused PUTs changed nothing")
}

// Schedules are found by name as well as id (a stable import id), and a
// name is unique per queue.
func TestScheduleNamesThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	rival, _ := shared.tenant(t)
	s, err := owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly-report", Queue: "reports", Cron: "0 3 * * *",
		Timezone: "Europe/Paris", Payload: map[string]int{"n": 1}})
	require.NoError(t, err)
	byName, err := owner.GetSchedule(ctx(t), "nightly-report")
	require.NoError(t, err)
	require.Equal(t, s.ID, byName.ID)
	require.Equal(t, "Europe/Paris", byName.Timezone)

	_, err = owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly-report", Queue: "reports", Cron: "@hourly"})
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 409, ae.Status)
	require.Equal(t, "name", ae.Field)
	// Another queue may have a schedule of the same name; the name alone
	// then names neither, and the id or the queue tells them apart.
	other, err := owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly-report", Queue: "other", Cron: "@hourly"})
	require.NoError(t, err)
	_, err = owner.GetSchedule(ctx(t), "nightly-report")
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 409, ae.Status)
	require.Equal(t, client.CodeAmbiguousName, ae.Code)
	require.NoError(t, owner.DeleteSchedule(ctx(t), other.ID))

	// Another tenant's schedule of the same name is its own; neither sees
	// the other's.
	_, err = rival.GetSchedule(ctx(t), "nightly-report")
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = rival.GetSchedule(ctx(t), s.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	theirs, err := rival.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly-report", Queue: "x", Cron: "@daily"})
	require.NoError(t, err)
	require.NotEqual(t, s.ID, theirs.ID)

	// A full replace by name keeps the id.
	off := false
	up, err := owner.UpdateSchedule(ctx(t), "nightly-report", client.ScheduleRequest{Name: "nightly-report", Queue: "reports",
		Cron: "0 4 * * *", Enabled: &off})
	require.NoError(t, err)
	require.Equal(t, s.ID, up.ID)
	require.Equal(t, "UTC", up.Timezone, "a replace resets what it leaves out")
	require.Nil(t, up.NextRun)
}
