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

func TestFetchNoContentIsNil(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusNoContent, "")
	job, err := rec.client(t).Fetch(context.Background(), client.FetchRequest{
		Queues: []string{"a", "b"}, WorkerID: "w1", Hostname: "h1",
		Timeout: 1500 * time.Millisecond, LeaseDuration: time.Minute,
	})
	require.NoError(t, err)
	require.Nil(t, job)
	rec.requireRequest(t, "POST", "/api/v1/fetch",
		`{"queues":["a","b"],"worker_id":"w1","hostname":"h1","timeout":1.5,"lease_duration":60}`)
}

func TestFetchDecodesJob(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"job_id":"job_1","queue":"emails.send",
		"payload":{"to":"x"},"attempt":2,"max_retries":5,"lease_duration":60,
		"checkpoint":null,"tags":{"tenant":"acme"}}`)
	job, err := rec.client(t).Fetch(context.Background(), client.FetchRequest{Queues: []string{"emails.send"}})
	require.NoError(t, err)
	require.Equal(t, &client.Job{
		ID: "job_1", Queue: "emails.send", Payload: json.RawMessage(`{"to":"x"}`),
		Attempt: 2, MaxRetries: 5, LeaseDuration: time.Minute,
		Tags: map[string]string{"tenant": "acme"},
	}, job)
}

// Fetch hands out a lease token; the calls that report on the job send
// it back when given it.
func TestLeaseTokenTravelsWithTheProtocol(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"job_id":"job_1","queue":"q","payload":{},"attempt":1,"max_retries":3,
		"lease_duration":60,"checkpoint":null,"tags":{},"lease_token":"tok-1"}`)
	c := rec.client(t)
	job, err := c.Fetch(context.Background(), client.FetchRequest{Queues: []string{"q"}})
	require.NoError(t, err)
	require.Equal(t, "tok-1", job.LeaseToken)

	rec.respond(http.StatusOK, `{"status":"completed"}`)
	require.NoError(t, c.Ack(context.Background(), job.ID, nil, client.Lease(job.LeaseToken)))
	rec.requireRequest(t, "POST", "/api/v1/ack/job_1", `{"lease_token":"tok-1"}`)
	require.NoError(t, c.AckStep(context.Background(), job.ID, nil, client.StepExit, client.Lease(job.LeaseToken)))
	rec.requireRequest(t, "POST", "/api/v1/ack/job_1", `{"step_status":"exit","lease_token":"tok-1"}`)

	rec.respond(http.StatusOK, `{"status":"dead","attempts_remaining":0}`)
	_, err = c.Fail(context.Background(), job.ID, "boom", "", client.Lease(job.LeaseToken))
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/fail/job_1", `{"error":"boom","lease_token":"tok-1"}`)

	rec.respond(http.StatusOK, `{"jobs":{"job_1":{"status":"ok"}}}`)
	_, err = c.Heartbeat(context.Background(), map[string]client.HeartbeatJob{job.ID: {LeaseToken: job.LeaseToken}})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/heartbeat", `{"jobs":{"job_1":{"lease_token":"tok-1"}}}`)

	rec.respond(http.StatusOK, `{"results":[{"job_id":"job_1","status":"completed"}]}`)
	_, err = c.AckBatch(context.Background(), []client.AckItem{{JobID: job.ID, LeaseToken: job.LeaseToken}})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/ack/batch", `{"acks":[{"job_id":"job_1","lease_token":"tok-1"}]}`)
}

func TestAck(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{}`)
	c := rec.client(t)
	require.NoError(t, c.Ack(context.Background(), "job_1", map[string]bool{"sent": true}))
	rec.requireRequest(t, "POST", "/api/v1/ack/job_1", `{"result":{"sent":true}}`)

	require.NoError(t, c.Ack(context.Background(), "job/2", nil))
	rec.requireRequest(t, "POST", "/api/v1/ack/job%2F2", `{}`)

	require.NoError(t, c.ForWorker("w1").Ack(context.Background(), "job_3", nil))
	rec.requireRequest(t, "POST", "/api/v1/ack/job_3", `{"worker_id":"w1"}`)
}

func TestWorkerIDTravelsWithTheProtocol(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusNoContent, "")
	c := rec.client(t, client.WithWorkerID("w9"))
	_, err := c.Fetch(context.Background(), client.FetchRequest{Queues: []string{"q"}})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/fetch", `{"queues":["q"],"worker_id":"w9"}`)

	rec.respond(http.StatusOK, `{"status":"dead","attempts_remaining":0}`)
	_, err = c.Fail(context.Background(), "job_1", "boom", "")
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/fail/job_1", `{"error":"boom","worker_id":"w9"}`)

	rec.respond(http.StatusOK, `{"jobs":{"job_1":{"status":"lost"}}}`)
	res, err := c.Heartbeat(context.Background(), map[string]client.HeartbeatJob{"job_1": {}})
	require.NoError(t, err)
	require.True(t, res.Lost("job_1"))
	require.False(t, res.Cancelled("job_1"))
	rec.requireRequest(t, "POST", "/api/v1/heartbeat", `{"worker_id":"w9","jobs":{"job_1":{}}}`)
}

func TestFail(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK,
		`{"status":"retrying","next_attempt_at":"2026-02-11T10:00:15Z","attempts_remaining":4}`)
	res, err := rec.client(t).Fail(context.Background(), "job_1", "SMTP timeout", "at send:42")
	require.NoError(t, err)
	next := time.Date(2026, 2, 11, 10, 0, 15, 0, time.UTC)
	require.Equal(t, &client.FailResult{Status: "retrying", NextAttemptAt: &next, AttemptsRemaining: 4}, res)
	rec.requireRequest(t, "POST", "/api/v1/fail/job_1", `{"error":"SMTP timeout","backtrace":"at send:42"}`)
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK,
		`{"jobs":{"job_1":{"status":"ok"},"job_2":{"status":"ok"},"job_3":{"status":"cancel"}}}`)
	res, err := rec.client(t).Heartbeat(context.Background(), map[string]client.HeartbeatJob{
		"job_1": {},
		"job_2": {Progress: &client.Progress{Current: 450, Total: 1000, Message: "Sending"}},
		"job_3": {Checkpoint: json.RawMessage(`{"offset":47000}`)},
	})
	require.NoError(t, err)
	require.False(t, res.Cancelled("job_1"))
	require.True(t, res.Cancelled("job_3"))
	require.False(t, res.Cancelled("job_unknown"))
	rec.requireRequest(t, "POST", "/api/v1/heartbeat", `{"jobs":{
		"job_1":{},
		"job_2":{"progress":{"current":450,"total":1000,"message":"Sending"}},
		"job_3":{"checkpoint":{"offset":47000}}}}`)
}

func TestHeartbeatJobRoundTrips(t *testing.T) {
	t.Parallel()
	in := client.HeartbeatJob{Progress: &client.Progress{Current: 1, Total: 2}, Checkpoint: json.RawMessage(`{"o":1}`)}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	require.JSONEq(t, `{"progress":{"current":1,"total":2},"checkpoint":{"o":1}}`, string(b))
	var out client.HeartbeatJob
	require.NoError(t, json.Unmarshal(b, &out))
	require.Equal(t, in, out)
}

func TestGetJob(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{
		"id":"job_1","queue":"emails.send","payload":{"to":"x"},"state":"active",
		"priority":"normal","attempt":2,"max_retries":5,"retry_backoff":"exponential",
		"retry_base_delay":"5s","retry_max_delay":"10m","created_at":"2026-02-11T10:00:00Z",
		"scheduled_at":null,"started_at":"2026-02-11T10:00:01Z","completed_at":null,
		"expire_after":"1h","unique_key":"u","unique_period":3600,"batch_id":null,
		"tags":{"tenant":"acme"},"progress":{"current":450,"total":1000,"message":"m"},
		"checkpoint":null,"result":{"ok":true},
		"errors":[{"attempt":1,"error":"SMTP timeout","backtrace":"bt","at":"2026-02-11T10:00:05Z"}],
		"worker":{"id":"worker-abc","hostname":"pod-1"}}`)
	d, err := rec.client(t).GetJob(context.Background(), "job_1")
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/jobs/job_1", "")

	started := time.Date(2026, 2, 11, 10, 0, 1, 0, time.UTC)
	require.Equal(t, &client.JobDetail{
		ID: "job_1", Queue: "emails.send", Payload: json.RawMessage(`{"to":"x"}`),
		State: client.StateActive, Priority: client.PriorityNormal, Attempt: 2, MaxRetries: 5,
		RetryBackoff: client.BackoffExponential, RetryBaseDelay: 5 * time.Second,
		RetryMaxDelay: 10 * time.Minute, CreatedAt: time.Date(2026, 2, 11, 10, 0, 0, 0, time.UTC),
		StartedAt: &started, ExpireAfter: time.Hour, UniqueKey: "u", UniquePeriod: time.Hour,
		Tags:     map[string]string{"tenant": "acme"},
		Progress: &client.Progress{Current: 450, Total: 1000, Message: "m"},
		Result:   json.RawMessage(`{"ok":true}`),
		Errors: []client.JobError{{Attempt: 1, Error: "SMTP timeout", Backtrace: "bt",
			At: time.Date(2026, 2, 11, 10, 0, 5, 0, time.UTC)}},
		Worker: &client.WorkerRef{ID: "worker-abc", Hostname: "pod-1"},
	}, d)
}
