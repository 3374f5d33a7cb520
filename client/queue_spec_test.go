package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

const queueReply = `{"name":"emails","description":"Outbound","counts":{"pending":1,"scheduled":0,"active":0,"retrying":0,
	"completed":0,"dead":0,"cancelled":0,"held":0},"throughput":0,"oldest_pending_age":0,"paused":true,"draining":false,
	"drained":false,"concurrency":5,"throttle":{"rate":100,"period":"1m"},"defaults":{"max_retries":0,"retry_backoff":"linear",
	"retry_base_delay":"1m30s","retry_max_delay":null,"lease_duration":"5m","expire_after":"24h","retention":null}}`

func TestPutQueue(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, queueReply)
	c := rec.client(t)
	five, zero := int64(5), 0
	spec := client.QueueSpec{Description: "Outbound", Paused: true, Concurrency: &five,
		Throttle: &client.QueueThrottleSpec{Rate: 100, Period: time.Minute},
		Defaults: client.QueueDefaultsSpec{MaxRetries: &zero, RetryBackoff: "linear", RetryBaseDelay: 90 * time.Second,
			LeaseDuration: 5 * time.Minute, ExpireAfter: 24 * time.Hour}}
	q, err := c.PutQueue(context.Background(), "emails", spec)
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/emails", `{"description":"Outbound","paused":true,"concurrency":5,
		"throttle":{"rate":100,"period":"1m"},"defaults":{"max_retries":0,"retry_backoff":"linear","retry_base_delay":"1m30s",
		"retry_max_delay":null,"lease_duration":"5m","expire_after":"24h","retention":null}}`)
	require.Equal(t, "Outbound", q.Description)
	require.JSONEq(t, `"24h"`, string(q.Defaults.ExpireAfter))

	// What a queue shows is the spec that made it.
	back, err := client.QueueSpecOf(q)
	require.NoError(t, err)
	require.Equal(t, spec, back)

	// An empty spec resets everything: every field is sent but schema,
	// which nil keeps.
	_, err = c.PutQueue(context.Background(), "emails", client.QueueSpec{})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/emails", `{"description":"","paused":false,"concurrency":null,"throttle":null,
		"defaults":{"max_retries":null,"retry_backoff":null,"retry_base_delay":null,"retry_max_delay":null,"lease_duration":null,
		"expire_after":null,"retention":null}}`)

	rec.respond(http.StatusBadRequest, `{"error":{"code":"bad_request","message":"bad","field":"throttle.period"}}`)
	_, err = c.PutQueue(context.Background(), "emails", spec)
	require.Error(t, err)
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "throttle.period", ae.Field)
}

func TestGetScheduleByName(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, scheduleReply)
	c := rec.client(t)
	s, err := c.GetSchedule(context.Background(), "ops/daily report")
	require.NoError(t, err)
	require.Equal(t, "sch_1", s.ID)
	rec.requireRequest(t, "GET", "/api/v1/schedules/ops%2Fdaily%20report", "")
}

// A spec's schema: nil is left out of the body (the queue keeps its
// schema), NoSchema is sent as null (removed), a schema as written; a
// typed queue read back gives its schema to QueueSpecOf, a queue without
// one (null) a nil Schema.
func TestPutQueueSchema(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"name":"payments","defaults":{},"schema":{"type":"object"},"schema_version":2}`)
	c := rec.client(t)
	ctx := context.Background()
	empty := `"description":"","paused":false,"concurrency":null,"throttle":null,"defaults":{"max_retries":null,
		"retry_backoff":null,"retry_base_delay":null,"retry_max_delay":null,"lease_duration":null,"expire_after":null,"retention":null}`

	q, err := c.PutQueue(ctx, "payments", client.QueueSpec{Schema: json.RawMessage(`{ "type": "object" }`)})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/payments", `{`+empty+`,"schema":{"type":"object"}}`)
	require.EqualValues(t, 2, q.SchemaVersion)
	spec, err := client.QueueSpecOf(q)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"object"}`, string(spec.Schema))

	_, err = c.PutQueue(ctx, "payments", client.QueueSpec{})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/payments", `{`+empty+`}`)

	_, err = c.PutQueue(ctx, "payments", client.QueueSpec{Schema: client.NoSchema})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/payments", `{`+empty+`,"schema":null}`)

	rec.respond(http.StatusOK, `{"name":"payments","defaults":{},"schema":null,"schema_version":0}`)
	q, err = c.GetQueue(ctx, "payments")
	require.NoError(t, err)
	spec, err = client.QueueSpecOf(q)
	require.NoError(t, err)
	require.Nil(t, spec.Schema, "no schema: the spec keeps (none)")
}
