package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/stretchr/testify/require"
)

func TestEnqueueSendsSeedShape(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"job_id":"job_1","status":"pending","unique_existing":true}`)
	c := rec.client(t, client.WithNamespace("emails"), client.WithHeader("X-Extra", "yes"))

	at := time.Date(2026, 2, 11, 10, 0, 0, 0, time.FixedZone("x", 3600))
	res, err := c.Enqueue(context.Background(), client.EnqueueRequest{
		Queue:          "emails.send",
		Payload:        map[string]string{"to": "user@example.com"},
		Priority:       client.PriorityHigh,
		UniqueKey:      "welcome",
		UniquePeriod:   time.Hour,
		MaxRetries:     new(0),
		RetryBackoff:   client.BackoffExponential,
		RetryBaseDelay: 5 * time.Second,
		RetryMaxDelay:  10 * time.Minute,
		ScheduledAt:    at,
		ExpireAfter:    90 * time.Minute,
		Tags:           map[string]string{"tenant": "acme"},
	})
	require.NoError(t, err)
	require.Equal(t, &client.EnqueueResult{JobID: "job_1", Status: "pending", UniqueExisting: true}, res)
	rec.requireRequest(t, "POST", "/api/v1/enqueue", `{
		"queue":"emails.send","payload":{"to":"user@example.com"},"priority":"high",
		"unique_key":"welcome","unique_period":3600,"max_retries":0,
		"retry_backoff":"exponential","retry_base_delay":"5s","retry_max_delay":"10m",
		"scheduled_at":"2026-02-11T09:00:00Z","expire_after":"1h30m","tags":{"tenant":"acme"}}`)
	require.Equal(t, "Bearer k3y", rec.requestHeader("Authorization"))
	require.Equal(t, "emails", rec.requestHeader(client.NamespaceHeader))
	require.Equal(t, "yes", rec.requestHeader("X-Extra"))
}

func TestEnqueueLeavesZeroFieldsOut(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"job_id":"job_1","status":"pending"}`)
	_, err := rec.client(t).Enqueue(context.Background(), client.EnqueueRequest{
		Queue: "q", Payload: json.RawMessage(`[1,2]`),
	})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/enqueue", `{"queue":"q","payload":[1,2]}`)
}

func TestEnqueueBatch(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"job_ids":["job_1","job_2"],"batch_id":"batch_1"}`)
	res, err := rec.client(t).EnqueueBatch(context.Background(), client.BatchRequest{
		Jobs: []client.EnqueueRequest{
			{Queue: "emails.send", Payload: map[string]string{"to": "a"}},
			{Queue: "emails.send", Payload: map[string]string{"to": "b"}, Priority: client.PriorityCritical},
		},
		Batch: &client.BatchOptions{CallbackQueue: "done", CallbackPayload: map[string]string{"c": "1"}},
	})
	require.NoError(t, err)
	require.Equal(t, &client.BatchResult{JobIDs: []string{"job_1", "job_2"}, BatchID: "batch_1"}, res)
	rec.requireRequest(t, "POST", "/api/v1/enqueue/batch", `{
		"jobs":[{"queue":"emails.send","payload":{"to":"a"}},
		        {"queue":"emails.send","payload":{"to":"b"},"priority":"critical"}],
		"batch":{"callback_queue":"done","callback_payload":{"c":"1"}}}`)
}

func TestWithNamespaceCopy(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"job_id":"job_1","status":"pending"}`)
	base := rec.client(t)
	other := base.WithNamespace("billing")

	_, err := other.Enqueue(context.Background(), client.EnqueueRequest{Queue: "q"})
	require.NoError(t, err)
	require.Equal(t, "billing", rec.requestHeader(client.NamespaceHeader))

	_, err = base.Enqueue(context.Background(), client.EnqueueRequest{Queue: "q"})
	require.NoError(t, err)
	require.Empty(t, rec.requestHeader(client.NamespaceHeader))
}

func TestHeaderOptionOverridesAuthorization(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"job_id":"job_1","status":"pending"}`)
	c := client.New(rec.srv.URL, "",
		client.WithHeader("Authorization", "Bearer secret"),
		client.WithHeader(client.ShardNamespaceHeader, "t_x/default"))
	t.Cleanup(c.CloseIdleConnections)
	_, err := c.Enqueue(context.Background(), client.EnqueueRequest{Queue: "q"})
	require.NoError(t, err)
	require.Equal(t, "Bearer secret", rec.requestHeader("Authorization"))
	require.Equal(t, "t_x/default", rec.requestHeader(client.ShardNamespaceHeader))
}
