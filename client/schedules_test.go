package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

const scheduleReply = `{"id":"sch_1","name":"daily","queue":"reports","cron":"0 9 * * *","timezone":"UTC",
	"payload":{"k":1},"priority":"high","unique_key":null,"max_retries":3,"enabled":true,
	"next_run":"2026-11-01T12:00:00Z","last_run":null,"last_job_id":null,
	"created_at":"2026-11-01T12:00:00Z","updated_at":"2026-11-01T12:00:00Z"}`

func TestSchedules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := newRecorder(t, http.StatusCreated, scheduleReply)
	c := rec.client(t)
	s, err := c.CreateSchedule(ctx, client.ScheduleRequest{Name: "daily", Queue: "reports", Cron: "0 9 * * *",
		Payload: map[string]int{"k": 1}, Priority: client.PriorityHigh})
	require.NoError(t, err)
	next := created
	want := &client.Schedule{ID: "sch_1", Name: "daily", Queue: "reports", Cron: "0 9 * * *", Timezone: "UTC",
		Payload: json.RawMessage(`{"k":1}`), Priority: client.PriorityHigh, MaxRetries: 3, Enabled: true,
		NextRun: &next, CreatedAt: &next, UpdatedAt: &next}
	require.Equal(t, want, s)
	rec.requireRequest(t, "POST", "/api/v1/schedules", `{"name":"daily","queue":"reports","cron":"0 9 * * *","payload":{"k":1},"priority":"high"}`)

	rec.respond(http.StatusOK, scheduleReply)
	_, err = c.GetSchedule(ctx, "sch_1")
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/schedules/sch_1", "")
	off := false
	_, err = c.UpdateSchedule(ctx, "sch_1", client.ScheduleRequest{Name: "d", Queue: "q", Cron: "@hourly", Enabled: &off})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/schedules/sch_1", `{"name":"d","queue":"q","cron":"@hourly","enabled":false}`)
	_, err = c.EnableSchedule(ctx, "sch_1")
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/schedules/sch_1/enable", "")
	_, err = c.DisableSchedule(ctx, "sch_1")
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/schedules/sch_1/disable", "")

	rec.respond(http.StatusCreated, `{"job_id":"job_1","status":"pending"}`)
	ran, err := c.RunSchedule(ctx, "daily report")
	require.NoError(t, err)
	require.Equal(t, &client.EnqueueResult{JobID: "job_1", Status: "pending"}, ran)
	rec.requireRequest(t, "POST", "/api/v1/schedules/daily%20report/run", "")

	rec.respond(http.StatusOK, `{"schedules":[`+scheduleReply+`]}`)
	list, err := c.ListSchedules(ctx)
	require.NoError(t, err)
	require.Equal(t, []client.Schedule{*want}, list)
	rec.requireRequest(t, "GET", "/api/v1/schedules", "")

	rec.respond(http.StatusNoContent, "")
	require.NoError(t, c.DeleteSchedule(ctx, "sch_1"))
	rec.requireRequest(t, "DELETE", "/api/v1/schedules/sch_1", "")

	rec.respond(http.StatusNotFound, `{"error":{"code":"not_found","message":"schedule sch_2 not found"}}`)
	_, err = c.GetSchedule(ctx, "sch_2")
	require.True(t, client.IsNotFound(err), "%v", err)

	rec.respond(http.StatusConflict, `{"error":{"code":"ambiguous_name","message":"schedules named \"daily\" are in queues a, b: refer to one by its id"}}`)
	_, err = c.GetSchedule(ctx, "daily")
	require.True(t, client.IsConflict(err), "%v", err)
	require.Equal(t, client.CodeAmbiguousName, client.ErrorCode(err))
}
