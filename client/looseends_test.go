package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func TestListBulkPages(t *testing.T) {
	t.Parallel()
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/v1/bulk", r.URL.Path)
		query = r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("cursor") == "" {
			_, _ = w.Write([]byte(`{"operations":[{"id":"bulk_2","action":"retry","status":"processing","total":9,"processed":3,
				"created_at":"2026-02-11T10:00:00Z","finished_at":null,"progress_url":"/api/v1/bulk/bulk_2/progress"}],
				"cursor":"YnVsa18y","has_more":true}`))
			return
		}
		_, _ = w.Write([]byte(`{"operations":[],"cursor":null,"has_more":false}`))
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	page, err := c.ListBulk(context.Background(), 1, "")
	require.NoError(t, err)
	require.Equal(t, "limit=1", query)
	require.Len(t, page.Operations, 1)
	op := page.Operations[0]
	require.Equal(t, "bulk_2", op.ID)
	require.False(t, op.Done())
	require.EqualValues(t, 3, op.Processed)
	require.True(t, page.HasMore)
	require.Equal(t, "YnVsa18y", page.Cursor)
	page, err = c.ListBulk(context.Background(), 0, page.Cursor)
	require.NoError(t, err)
	require.Equal(t, "cursor=YnVsa18y", query)
	require.Empty(t, page.Operations)
	require.False(t, page.HasMore)
	require.Empty(t, page.Cursor)
}

// A job's own lease and a chain step's own options travel as the wire
// shapes name them.
func TestEnqueueSendsLeaseAndStepOptions(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"job_id":"job_1","status":"pending"}`)
	_, err := rec.client(t).Enqueue(context.Background(), client.EnqueueRequest{
		Queue: "extract", LeaseDuration: 2 * time.Minute,
		Chain: &client.Chain{
			Steps: []client.ChainStep{{Queue: "extract"}, {Queue: "summarize", Priority: client.PriorityCritical,
				MaxRetries: new(1), RetryBackoff: client.BackoffLinear, RetryBaseDelay: time.Second, RetryMaxDelay: time.Minute,
				ExpireAfter: time.Hour, LeaseDuration: 5 * time.Minute, Tags: map[string]string{"step": "2"}}},
			OnFailure: &client.ChainStep{Queue: "alerts", MaxRetries: new(0)},
		},
	})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/enqueue", `{"queue":"extract","lease_duration":"2m","chain":{
		"steps":[{"queue":"extract"},{"queue":"summarize","priority":"critical","max_retries":1,"retry_backoff":"linear",
			"retry_base_delay":"1s","retry_max_delay":"1m","expire_after":"1h","lease_duration":"5m","tags":{"step":"2"}}],
		"on_failure":{"queue":"alerts","max_retries":0}}}`)
}
