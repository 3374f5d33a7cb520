package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func TestBulkByIDs(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"affected":2,"skipped":1,"errors":1,"duration_ms":230.5,
		"failures":[{"job_id":"job_4","error":"job is active"}]}`)
	res, op, err := rec.client(t).Bulk(context.Background(), client.BulkRequest{
		JobIDs: []string{"job_1", "job_2", "job_3", "job_4"}, Action: client.BulkRetry,
	})
	require.NoError(t, err)
	require.Nil(t, op)
	require.Equal(t, &client.BulkResult{Affected: 2, Skipped: 1, Errors: 1, Duration: 230500 * time.Microsecond,
		Failures: []client.BulkFailure{{JobID: "job_4", Error: "job is active"}}}, res)
	rec.requireRequest(t, "POST", "/api/v1/jobs/bulk", `{"job_ids":["job_1","job_2","job_3","job_4"],"action":"retry"}`)
	require.Equal(t, "Bearer k3y", rec.requestHeader("Authorization"))
}

func TestBulkByFilterStartsAnOperation(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusAccepted, `{"bulk_operation_id":"bulk_1","status":"processing",
		"estimated_total":142000,"progress_url":"/api/v1/bulk/bulk_1/progress"}`)
	res, op, err := rec.client(t).Bulk(context.Background(), client.BulkRequest{
		Filter: &client.SearchFilter{Queue: "emails.send", State: []string{"pending"}},
		Action: client.BulkMove, MoveToQueue: "emails.v2",
	})
	require.NoError(t, err)
	require.Nil(t, res)
	require.Equal(t, &client.BulkOperation{ID: "bulk_1", Action: "move", Status: client.BulkProcessing,
		Total: 142000, ProgressURL: "/api/v1/bulk/bulk_1/progress"}, op)
	require.False(t, op.Done())
	rec.requireRequest(t, "POST", "/api/v1/jobs/bulk",
		`{"filter":{"queue":"emails.send","state":["pending"]},"action":"move","move_to_queue":"emails.v2"}`)

	rec.respond(http.StatusOK, `{"affected":0,"skipped":0,"errors":0,"duration_ms":1}`)
	_, _, err = rec.client(t).Bulk(context.Background(), client.BulkRequest{
		Filter: &client.SearchFilter{}, Action: client.BulkChangePriority, Priority: client.PriorityCritical,
	})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/jobs/bulk", `{"filter":{},"action":"change_priority","priority":"critical"}`)
}

func TestBulkChecksBeforeSending(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{}`)
	c := rec.client(t)
	f := &client.SearchFilter{Queue: "q"}
	for name, req := range map[string]client.BulkRequest{
		"no action":         {JobIDs: []string{"a"}},
		"neither":           {Action: client.BulkRetry},
		"both":              {Action: client.BulkRetry, JobIDs: []string{"a"}, Filter: f},
		"too many":          {Action: client.BulkRetry, JobIDs: make([]string, client.MaxBulkJobIDs+1)},
		"move nowhere":      {Action: client.BulkMove, Filter: f},
		"priority missing":  {Action: client.BulkChangePriority, Filter: f},
		"empty ids no filt": {Action: client.BulkDelete, JobIDs: []string{}},
	} {
		res, op, err := c.Bulk(context.Background(), req)
		require.Error(t, err, name)
		require.Nil(t, res, name)
		require.Nil(t, op, name)
	}
	require.Empty(t, rec.method, "nothing was sent")
}

func TestBulkErrors(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusBadRequest, `{"error":{"code":"bad_request","message":"unknown action","field":"action"}}`)
	_, _, err := rec.client(t).Bulk(context.Background(), client.BulkRequest{Action: "explode", JobIDs: []string{"a"}})
	require.True(t, client.IsBadRequest(err), "%v", err)
}

const opDone = `{"id":"bulk_1","action":"retry","status":"completed","total":3,"processed":3,"affected":2,
	"skipped":1,"errors":0,"created_at":"2026-11-01T12:00:00Z","finished_at":"2026-11-01T12:00:00Z"}`

func TestBulkStatusAndCancel(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, opDone)
	c := rec.client(t)
	op, err := c.BulkStatus(context.Background(), "bulk_1")
	require.NoError(t, err)
	fin := created
	require.Equal(t, &client.BulkOperation{ID: "bulk_1", Action: "retry", Status: client.BulkCompleted, Total: 3,
		Processed: 3, Affected: 2, Skipped: 1, CreatedAt: &created, FinishedAt: &fin}, op)
	require.True(t, op.Done())
	rec.requireRequest(t, "GET", "/api/v1/bulk/bulk_1", "")

	rec.respond(http.StatusOK, `{"id":"bulk_1","status":"cancelled","finished_at":null}`)
	op, err = c.CancelBulk(context.Background(), "bulk_1")
	require.NoError(t, err)
	require.Equal(t, client.BulkCancelled, op.Status)
	require.True(t, op.Done())
	rec.requireRequest(t, "DELETE", "/api/v1/bulk/bulk_1", "")

	rec.respond(http.StatusNotFound, `{"error":{"code":"not_found","message":"no such bulk operation"}}`)
	_, err = c.BulkStatus(context.Background(), "bulk_2")
	require.True(t, client.IsNotFound(err), "%v", err)
}

// progressServer serves one progress stream per connection from streams
// (the last repeats) and the status endpoint from status.
type progressServer struct {
	srv     *httptest.Server
	opens   atomic.Int32
	statusN atomic.Int32
}

func newProgressServer(t *testing.T, status string, streams ...string) *progressServer {
	t.Helper()
	p := &progressServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/bulk/{id}/progress", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "bulk_1" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no such bulk operation"}}`)
			return
		}
		n := int(p.opens.Add(1))
		require.Equal(t, "text/event-stream", r.Header.Get("Accept"))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, streams[min(n, len(streams))-1])
	})
	mux.HandleFunc("GET /api/v1/bulk/{id}", func(w http.ResponseWriter, r *http.Request) {
		p.statusN.Add(1)
		_, _ = io.WriteString(w, status)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func progressEvent(processed int) string {
	return fmt.Sprintf("event: progress\ndata: {\"id\":\"bulk_1\",\"action\":\"retry\",\"status\":\"processing\",\"total\":3,\"processed\":%d}\n\n", processed)
}

func TestWatchBulkReportsProgressAndTheDoneStatus(t *testing.T) {
	t.Parallel()
	p := newProgressServer(t, `{}`, ": hello\n\n"+progressEvent(1)+progressEvent(2)+"event: done\ndata: "+
		`{"id":"bulk_1","action":"retry","status":"completed","total":3,"processed":3,"affected":3}`+"\n\n")
	c := client.New(p.srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	var seen []int64
	op, err := c.WatchBulk(context.Background(), "bulk_1", func(op client.BulkOperation) { seen = append(seen, op.Processed) })
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, seen)
	require.Equal(t, client.BulkCompleted, op.Status)
	require.Equal(t, int64(3), op.Affected)
	require.Zero(t, p.statusN.Load(), "the done event carried the status")
}

func TestWatchBulkAsksForTheStatusAfterABareDone(t *testing.T) {
	t.Parallel()
	p := newProgressServer(t, opDone, progressEvent(1)+"event: done\n\n")
	c := client.New(p.srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	op, err := c.WatchBulk(context.Background(), "bulk_1", nil)
	require.NoError(t, err)
	require.Equal(t, client.BulkCompleted, op.Status)
	require.Equal(t, int64(2), op.Affected)
	require.Equal(t, int32(1), p.statusN.Load())
}

func TestWatchBulkReopensABrokenStream(t *testing.T) {
	t.Parallel()
	// The first stream ends without done while the status still says
	// processing; the second one finishes.
	p := newProgressServer(t, `{"id":"bulk_1","status":"processing","processed":1}`,
		progressEvent(1), progressEvent(2)+"event: done\ndata: "+strings.ReplaceAll(opDone, "\n\t", " ")+"\n\n")
	c := client.New(p.srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	var seen []int64
	op, err := c.WatchBulk(context.Background(), "bulk_1", func(op client.BulkOperation) { seen = append(seen, op.Processed) })
	require.NoError(t, err)
	require.Equal(t, client.BulkCompleted, op.Status)
	require.Equal(t, []int64{1, 2}, seen)
	require.Equal(t, int32(2), p.opens.Load())
}

func TestWatchBulkErrors(t *testing.T) {
	t.Parallel()
	p := newProgressServer(t, `{}`, "event: progress\ndata: {not json\n\n")
	c := client.New(p.srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	_, err := c.WatchBulk(context.Background(), "bulk_2", nil)
	require.True(t, client.IsNotFound(err), "%v", err)

	_, err = c.WatchBulk(context.Background(), "bulk_1", nil)
	require.ErrorContains(t, err, "progress event")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.WatchBulk(ctx, "bulk_1", nil)
	require.ErrorIs(t, err, context.Canceled)
}
