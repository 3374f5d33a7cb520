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

func TestFetchBatch(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"jobs":[
		{"job_id":"job_1","queue":"q","payload":{"n":1},"attempt":1,"max_retries":3,"lease_duration":30,"checkpoint":null,"tags":null},
		{"job_id":"job_2","queue":"q","payload":null,"attempt":2,"max_retries":3,"lease_duration":30,"checkpoint":{"o":1},"tags":null}]}`)
	c := rec.client(t, client.WithWorkerID("w9"))
	jobs, err := c.FetchBatch(context.Background(), client.FetchBatchRequest{
		Queues: []string{"q"}, Max: 50, Timeout: 2 * time.Second, LeaseDuration: 30 * time.Second,
	})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/fetch/batch",
		`{"queues":["q"],"worker_id":"w9","timeout":2,"lease_duration":30,"max":50}`)
	require.Len(t, jobs, 2)
	require.Equal(t, &client.Job{ID: "job_1", Queue: "q", Payload: json.RawMessage(`{"n":1}`), Attempt: 1, MaxRetries: 3, LeaseDuration: 30 * time.Second}, jobs[0])
	require.JSONEq(t, `{"o":1}`, string(jobs[1].Checkpoint))

	rec.respond(http.StatusOK, `{"jobs":[]}`)
	jobs, err = c.FetchBatch(context.Background(), client.FetchBatchRequest{Queues: []string{"q"}})
	require.NoError(t, err)
	require.NotNil(t, jobs)
	require.Empty(t, jobs)
}

func TestAckBatch(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"results":[{"job_id":"job_1","status":"completed"},
		{"job_id":"job_2","error":{"code":"lease_mismatch","message":"job job_2 is pending, not active"}}]}`)
	c := rec.client(t, client.WithWorkerID("w1"))
	res, err := c.AckBatch(context.Background(), []client.AckItem{{JobID: "job_1", Result: map[string]int{"n": 1}}, {JobID: "job_2"}})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/ack/batch",
		`{"acks":[{"job_id":"job_1","result":{"n":1}},{"job_id":"job_2"}],"worker_id":"w1"}`)
	require.Len(t, res, 2)
	require.True(t, res[0].Acked())
	require.Equal(t, client.AckResult{JobID: "job_1", Status: "completed"}, res[0])
	require.False(t, res[1].Acked())
	require.Equal(t, client.CodeLeaseMismatch, res[1].Err.Code)

	rec.respond(http.StatusBadRequest, `{"error":{"code":"bad_request","message":"acks must hold at least one ack","field":"acks"}}`)
	_, err = c.AckBatch(context.Background(), nil)
	var apiErr *client.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "acks", apiErr.Field)
	rec.requireRequest(t, "POST", "/api/v1/ack/batch", `{"acks":[],"worker_id":"w1"}`)
}
