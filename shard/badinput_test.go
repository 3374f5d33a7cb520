package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Input accepted before and wrong afterwards: each is a 400 naming the
// field, and changes nothing.

// badUTF8 is a JSON string holding a byte that is not UTF-8: valid JSON
// syntax, so only a check of the text refuses it.
const badUTF8 = "\"caf\xe9\""

func TestBadEnqueueInputIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	far := time.Now().AddDate(11, 0, 0).UTC().Format(time.RFC3339)
	cases := []struct {
		path, body, field string
	}{
		{"/api/v1/enqueue", `{"queue":"q","scheduled_at":"9999-12-31T23:59:59Z"}`, "scheduled_at"},
		{"/api/v1/enqueue", `{"queue":"q","scheduled_at":"` + far + `"}`, "scheduled_at"},
		{"/api/v1/enqueue", `{"queue":"q","scheduled_at":"0001-01-01T00:00:00Z"}`, "scheduled_at"},
		{"/api/v1/enqueue", `{"queue":"q","unique_key":"u","unique_period":18446744074}`, "unique_period"},
		{"/api/v1/enqueue", `{"queue":"q","payload":` + badUTF8 + `}`, "payload"},
		{"/api/v1/enqueue", `{"queue":"q","payload":{"k":` + badUTF8 + `}}`, "payload"},
		{"/api/v1/enqueue", `{"queue":"q","lease_duration":"500ms"}`, "lease_duration"},
		{"/api/v1/enqueue", `{"queue":"q","lease_duration":"13h"}`, "lease_duration"},
		{"/api/v1/enqueue/batch", `{"jobs":[{"queue":"q"},{"queue":"q","payload":` + badUTF8 + `}]}`, "jobs[1].payload"},
		{"/api/v1/enqueue/batch", `{"jobs":[{"queue":"q"}],"batch":{"callback_queue":"cb","callback_payload":` + badUTF8 + `}}`, "batch.callback_payload"},
		{"/api/v1/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q"},{"queue":"s","payload":` + badUTF8 + `}]}}`, "chain.steps[1].payload"},
		{"/api/v1/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q"},{"queue":"s","max_retries":-1}]}}`, "chain.steps[1].max_retries"},
		{"/api/v1/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q"},{"queue":"s","lease_duration":0}]}}`, "chain.steps[1].lease_duration"},
		{"/api/v1/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q"},{"queue":"s","tags":{"":"x"}}]}}`, "chain.steps[1].tags"},
		{"/api/v1/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q","priority":"high"},{"queue":"s"}]}}`, "chain.steps[0]"},
		{"/api/v1/enqueue", `{"queue":"q","chain":{"steps":[{"queue":"q"}],"on_failure":{"queue":"f","retry_backoff":"sometimes"}}}`, "chain.on_failure.retry_backoff"},
	}
	for _, tc := range cases {
		r := b.call("POST", tc.path, []byte(tc.body))
		require.Equal(t, 400, r.Status, "%s: %s", tc.body, r.Raw)
		require.Equal(t, tc.field, errField(r), "%s: %s", tc.body, r.Raw)
	}
	ids, _ := b.search(map[string]any{"state": []string{"pending", "scheduled"}})
	require.Empty(t, ids, "nothing was enqueued")

	// At the bounds: nine years ahead is scheduled, a past time runs now.
	near := time.Now().AddDate(9, 0, 0).UTC().Format(time.RFC3339)
	r := b.call("POST", "/api/v1/enqueue", []byte(`{"queue":"q","scheduled_at":"`+near+`"}`))
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Equal(t, "scheduled", r.Body["status"])
	r = b.call("POST", "/api/v1/enqueue", []byte(`{"queue":"q","scheduled_at":"2001-01-01T00:00:00Z","unique_key":"u","unique_period":2592000}`))
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Equal(t, "pending", r.Body["status"])
	require.EqualValues(t, 2592000, b.job(r.Body["job_id"].(string))["unique_period"])
}

func TestBadWorkerInputIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	for _, tc := range []struct {
		path, body, field string
	}{
		{"/api/v1/ack/" + id, `{"result":` + badUTF8 + `}`, "result"},
		{"/api/v1/ack/batch", `{"acks":[{"job_id":"` + id + `","result":[` + badUTF8 + `]}]}`, "acks[0].result"},
		{"/api/v1/heartbeat", `{"jobs":{"` + id + `":{"progress":` + badUTF8 + `}}}`, "progress"},
		{"/api/v1/heartbeat", `{"jobs":{"` + id + `":{"checkpoint":{"at":` + badUTF8 + `}}}}`, "checkpoint"},
	} {
		r := b.call("POST", tc.path, []byte(tc.body))
		require.Equal(t, 400, r.Status, "%s: %s", tc.body, r.Raw)
		require.Equal(t, tc.field, errField(r), "%s: %s", tc.body, r.Raw)
	}
	d := b.job(id)
	require.Equal(t, "active", d["state"])
	require.Nil(t, d["checkpoint"])
	require.Nil(t, d["progress"])
}

func TestBadScheduleInputIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, tc := range []struct {
		cron, payload, field string
	}{
		{"@every 0s", "null", "cron"},
		{"@every -1s", "null", "cron"},
		{"@every 1ns", "null", "cron"},
		{"@every 1500ms", "null", "cron"},
		{"@every 1s", badUTF8, "payload"},
	} {
		body := fmt.Sprintf(`{"name":"s%d","queue":"q","cron":%q,"payload":%s}`, i, tc.cron, tc.payload)
		r := b.call("POST", "/api/v1/schedules", []byte(body))
		require.Equal(t, 400, r.Status, "%s: %s", body, r.Raw)
		require.Equal(t, tc.field, errField(r), "%s: %s", body, r.Raw)
	}
	list := b.call("GET", "/api/v1/schedules", nil)
	require.Empty(t, list.Body["schedules"], "no schedule was made")
	r := b.call("POST", "/api/v1/schedules", map[string]any{"name": "ok", "queue": "q", "cron": "@every 1s"})
	require.Equal(t, 201, r.Status, string(r.Raw))
}
