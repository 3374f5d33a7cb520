package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// TestSubprocessWorker runs `jobbie worker -- <handler>` as a process
// against jobbie dev, with a sh and a Python handler: acks with a JSON
// result, a failure then a success on retry, a non-retryable failure,
// progress and a checkpoint, a cancel that kills the child's process
// group, and a SIGTERM drain that loses no job.
func TestSubprocessWorker(t *testing.T) {
	d := startDevCLI(t)
	for _, lang := range []string{"sh", "python"} {
		t.Run(lang, func(t *testing.T) {
			if lang == "python" {
				if _, err := os.Stat("/usr/bin/python3"); err != nil {
					t.Skip("no /usr/bin/python3")
				}
			}
			handler := writeHandler(t, lang)
			dir := filepath.Dir(handler)
			t.Run("outcomes", func(t *testing.T) { subprocOutcomes(t, d, lang, handler, dir) })
			t.Run("timeout", func(t *testing.T) { subprocTimeout(t, d, lang, handler, dir) })
			t.Run("drain", func(t *testing.T) { subprocDrain(t, d, lang, handler, dir) })
		})
	}
}

// enqueue adds a job of mode to queue, retried at once up to twice. A
// hang job's lease is short: a cancelled running job ends (state
// cancelled) when its lease runs out, as its worker reports nothing.
func (d *devCLI) enqueue(t *testing.T, queue, mode string) string {
	t.Helper()
	two := 2
	req := client.EnqueueRequest{Queue: queue, Payload: json.RawMessage(`{"mode":"` + mode + `"}`),
		MaxRetries: &two, RetryBackoff: client.BackoffNone, Tags: map[string]string{"mode": mode}}
	if mode == "hang" {
		req.LeaseDuration = 3 * time.Second
	}
	res, err := d.owner.Enqueue(context.Background(), req)
	require.NoError(t, err)
	return res.JobID
}

// settle waits until job id is in a final state and returns it.
func (d *devCLI) settle(t *testing.T, id string) *client.JobDetail {
	t.Helper()
	var j *client.JobDetail
	require.Eventually(t, func() bool {
		var err error
		j, err = d.owner.GetJob(context.Background(), id)
		require.NoError(t, err)
		return j.State == wire.StateCompleted || j.State == wire.StateDead || j.State == wire.StateCancelled
	}, 2*time.Minute, 50*time.Millisecond, "job %s never settled", id)
	return j
}

func subprocOutcomes(t *testing.T, d *devCLI, lang, handler, dir string) {
	queue := "subproc-" + lang
	w := d.startWorker(t, dir, "w1", "--queue", queue, "--concurrency", "4", "--", handler)

	ack, flaky, permanent := d.enqueue(t, queue, "ack"), d.enqueue(t, queue, "flaky"), d.enqueue(t, queue, "permanent")
	progress, hang := d.enqueue(t, queue, "progress"), d.enqueue(t, queue, "hang")

	// Ack: stdout is the result, and the child saw the job in its env.
	j := d.settle(t, ack)
	require.Equal(t, wire.StateCompleted, j.State)
	var res struct {
		Handler, Tag, ID, Queue string
		Attempt                 int
		Job                     struct {
			ID         string            `json:"id"`
			Queue      string            `json:"queue"`
			Attempt    int               `json:"attempt"`
			MaxRetries int               `json:"max_retries"`
			Tags       map[string]string `json:"tags"`
		}
	}
	require.NoError(t, json.Unmarshal(j.Result, &res), "%s", j.Result)
	assert.Equal(t, lang, res.Handler)
	assert.Equal(t, "w1", res.Tag)
	assert.Equal(t, ack, res.ID)
	assert.Equal(t, queue, res.Queue)
	assert.Equal(t, 1, res.Attempt)
	assert.Equal(t, ack, res.Job.ID)
	assert.Equal(t, queue, res.Job.Queue)
	assert.Equal(t, 1, res.Job.Attempt)
	assert.Equal(t, 2, res.Job.MaxRetries)
	assert.Equal(t, map[string]string{"mode": "ack"}, res.Job.Tags)

	// Fail, then succeed on the retry: the error is stderr's, and stdout
	// that is not JSON is the result as a string.
	j = d.settle(t, flaky)
	require.Equal(t, wire.StateCompleted, j.State)
	assert.Equal(t, 2, j.Attempt)
	assert.JSONEq(t, `"recovered on attempt 2\n"`, string(j.Result))
	require.Len(t, j.Errors, 1)
	assert.Contains(t, j.Errors[0].Error, "exit status 3")
	assert.Contains(t, j.Errors[0].Error, "flaky failure on attempt 1")
	assert.NotContains(t, j.Errors[0].Error, "some output")

	// Exit 75: dead at once, retries left or not.
	j = d.settle(t, permanent)
	require.Equal(t, wire.StateDead, j.State)
	assert.Equal(t, wire.ReasonNonRetryable, j.DeadReason)
	assert.Equal(t, 1, j.Attempt)
	require.Len(t, j.Errors, 1)
	assert.Contains(t, j.Errors[0].Error, "bad input: no such customer")

	// Progress and a checkpoint on fd 3 reach the job while it runs.
	require.Eventually(t, func() bool {
		j, err := d.owner.GetJob(context.Background(), progress)
		require.NoError(t, err)
		return j.State == wire.StateActive && j.Progress != nil && string(j.Checkpoint) == `{"step":3}`
	}, time.Minute, 50*time.Millisecond, "no progress and checkpoint on job %s", progress)
	j, err := d.owner.GetJob(context.Background(), progress)
	require.NoError(t, err)
	assert.Equal(t, client.Progress{Current: 3, Total: 10, Message: "three of ten"}, *j.Progress)
	require.NoError(t, os.WriteFile(filepath.Join(dir, progress+".go"), nil, 0o644))
	j = d.settle(t, progress)
	require.Equal(t, wire.StateCompleted, j.State)
	assert.JSONEq(t, `{"done":true}`, string(j.Result))

	// A cancel kills the child and what it started (the Python handler
	// ignores SIGTERM: SIGKILL ends it).
	pid, grand := readPid(t, dir, hang+".pid"), readPid(t, dir, hang+".grandpid")
	require.True(t, alive(pid))
	require.True(t, alive(grand))
	cancelled := time.Now()
	status, err := d.owner.CancelJob(context.Background(), hang)
	require.NoError(t, err)
	require.Equal(t, wire.CancelRequested, status)
	require.Eventually(t, func() bool { return !alive(pid) && !alive(grand) }, 30*time.Second, 10*time.Millisecond,
		"handler %d or its child %d still runs after the cancel", pid, grand)
	// The worker learns of the cancel at its next heartbeat (200 ms),
	// then gives SIGTERM 500 ms before SIGKILL.
	t.Logf("%s handler and its child gone %s after the cancel", lang, time.Since(cancelled))
	assert.Equal(t, wire.StateCancelled, d.settle(t, hang).State)

	w.stop(t)
}

// subprocTimeout: --timeout kills a child that runs too long, and fails
// its attempt.
func subprocTimeout(t *testing.T, d *devCLI, lang, handler, dir string) {
	queue := "subproc-timeout-" + lang
	w := d.startWorker(t, dir, "w1", "--queue", queue, "--heartbeat", "200ms", "--timeout", "1s", "--", handler)
	id := d.enqueue(t, queue, "hang")
	pid, grand := readPid(t, dir, id+".pid"), readPid(t, dir, id+".grandpid")
	j := d.settle(t, id)
	require.Equal(t, wire.StateDead, j.State)
	assert.Equal(t, 3, j.Attempt)
	require.Len(t, j.Errors, 3)
	for _, e := range j.Errors {
		assert.Contains(t, e.Error, "timed out after 1s")
	}
	assert.False(t, alive(pid), "handler %d outlived its timeout", pid)
	assert.False(t, alive(grand), "handler's child %d outlived its timeout", grand)
	w.stop(t)
}

// subprocDrain: SIGTERM lets a running job finish within the grace, kills
// and fails the ones that do not, and takes no new job; a second worker
// then finishes every job.
func subprocDrain(t *testing.T, d *devCLI, lang, handler, dir string) {
	queue := "subproc-drain-" + lang
	w1 := d.startWorker(t, dir, "w1", "--queue", queue, "--concurrency", "3", "--heartbeat", "200ms",
		"--shutdown-grace", "5s", "--", handler)
	hung := []string{d.enqueue(t, queue, "hangonce"), d.enqueue(t, queue, "hangonce")}
	release := d.enqueue(t, queue, "release")
	var pids []int
	for _, id := range hung {
		pids = append(pids, readPid(t, dir, id+".pid"), readPid(t, dir, id+".grandpid"))
	}
	readPid(t, dir, release+".pid")
	// All three slots are busy: these wait.
	waiting := []string{d.enqueue(t, queue, "ack"), d.enqueue(t, queue, "ack")}

	require.NoError(t, w1.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o644))
	w1.stop(t)
	for _, pid := range pids {
		assert.False(t, alive(pid), "process %d outlived the worker's shutdown", pid)
	}
	// The released job finished within the grace, on the first worker.
	j := d.settle(t, release)
	require.Equal(t, wire.StateCompleted, j.State)
	assert.JSONEq(t, `{"tag":"w1"}`, string(j.Result))
	for _, id := range append(hung, waiting...) {
		j, err := d.owner.GetJob(context.Background(), id)
		require.NoError(t, err)
		assert.Contains(t, []string{wire.StatePending, wire.StateRetrying}, j.State, "job %s", id)
	}

	w2 := d.startWorker(t, dir, "w2", "--queue", queue, "--concurrency", "4", "--", handler)
	for _, id := range hung {
		j := d.settle(t, id)
		require.Equal(t, wire.StateCompleted, j.State, "job %s", id)
		assert.Equal(t, 2, j.Attempt)
		require.Len(t, j.Errors, 1)
		assert.Contains(t, j.Errors[0].Error, "worker_shutdown")
		assert.JSONEq(t, `{"tag":"w2"}`, string(j.Result))
	}
	for _, id := range waiting {
		j := d.settle(t, id)
		require.Equal(t, wire.StateCompleted, j.State, "job %s", id)
		assert.Equal(t, 1, j.Attempt, "job %s", id)
		assert.Contains(t, string(j.Result), `"tag":"w2"`)
	}
	w2.stop(t)
}

// TestSubprocessWorkerBadFlags: bad flags are refused before any request.
func TestSubprocessWorkerBadFlags(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	conn := []string{"--url", srv.URL, "--key", "k"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--queue", "q", "./handler"}, "the command after --"},
		{[]string{"--queue", "q", "--"}, "the command after --"},
		{[]string{"--", "true"}, "--queue: name at least one queue"},
		{[]string{"--queue", "q", "--concurrency", "0", "--", "true"}, "worker.concurrency (--concurrency, JOBBIE_WORKER_CONCURRENCY): 0 is out of range: 1 or more"},
		{[]string{"--queue", "q", "--timeout", "-1s", "--", "true"}, "worker.timeout (--timeout, JOBBIE_WORKER_TIMEOUT): -1s is out of range: 0s or more"},
		{[]string{"--queue", "q", "--shutdown-grace", "-1s", "--", "true"}, "worker.shutdown_grace (--shutdown-grace, JOBBIE_WORKER_SHUTDOWN_GRACE): -1s is out of range: 0s or more"},
		{[]string{"--queue", "a b", "--", "true"}, "--queue: queue id \"a b\" holds blanks"},
		{[]string{"--queue", "q", "--", "./no-such-handler"}, "the command: "},
	} {
		args := append(append([]string{"worker"}, conn...), tc.args...)
		_, _, err := runJobbie(t, "", args...)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
	assert.Zero(t, hits.Load(), "a refused command made a request")
}
