package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func TestListBatchesPages(t *testing.T) {
	t.Parallel()
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/v1/batches", r.URL.Path)
		query = r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("cursor") == "" {
			_, _ = w.Write([]byte(`{"batches":[{"id":"batch_2","total":3,"pending":0,"succeeded":2,"failed":1,
				"callback_queue":"done","callback_job_id":"job_9","callback_state":"completed",
				"created_at":"2026-02-11T10:00:00Z","completed_at":"2026-02-11T10:01:00Z"}],
				"cursor":"YmF0Y2hfMg","has_more":true}`))
			return
		}
		_, _ = w.Write([]byte(`{"batches":[],"cursor":null,"has_more":false}`))
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	page, err := c.ListBatches(context.Background(), 1, "")
	require.NoError(t, err)
	require.Equal(t, "limit=1", query)
	require.Len(t, page.Batches, 1)
	b := page.Batches[0]
	require.Equal(t, "batch_2", b.ID)
	require.Equal(t, 2, b.Succeeded)
	require.Equal(t, 1, b.Failed)
	require.Equal(t, "completed", *b.CallbackState)
	require.Equal(t, "job_9", *b.CallbackJobID)
	require.True(t, page.HasMore)
	require.Equal(t, "YmF0Y2hfMg", page.Cursor)
	page, err = c.ListBatches(context.Background(), 0, page.Cursor)
	require.NoError(t, err)
	require.Equal(t, "cursor=YmF0Y2hfMg", query)
	require.Empty(t, page.Batches)
	require.False(t, page.HasMore)
	require.Empty(t, page.Cursor)
}
