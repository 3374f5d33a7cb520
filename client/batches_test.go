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

func TestGetChain(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/jobs/job_1/chain" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"job job_2 is not a step of a chain"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"chain_id":"chain_1","step":0,"on_failure_queue":"alerts","on_exit_queue":null,
			"steps":[{"step":0,"queue":"a","job_id":"job_1","job_queue":"a","state":"completed","created_at":"2026-02-11T10:00:00Z","completed_at":"2026-02-11T10:00:01Z"},
			{"step":1,"queue":"b","job_id":null,"job_queue":null,"state":null,"created_at":null,"completed_at":null}]}`))
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "k")
	t.Cleanup(c.CloseIdleConnections)
	v, err := c.GetChain(context.Background(), "job_1")
	require.NoError(t, err)
	require.Equal(t, "chain_1", v.ChainID)
	require.Len(t, v.Steps, 2)
	require.Equal(t, "completed", *v.Steps[0].State)
	require.Nil(t, v.Steps[1].JobID)
	require.Equal(t, "alerts", *v.OnFailureQueue)
	_, err = c.GetChain(context.Background(), "job_2")
	require.True(t, client.IsNotFound(err), "%v", err)
}
