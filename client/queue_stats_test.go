package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// QueueStats sends the query the caller gave (times in UTC, none of the
// zero ones) on the queue's escaped path, decodes the answer, and a
// refusal is the server's error with its field.
func TestQueueStatsAndScaleRequests(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		uris []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.URL.RequestURI())
		mu.Unlock()
		switch {
		case r.URL.Query().Get("step") == "2m":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: &wire.Error{Code: "bad_request", Message: "step must be 1m or 1h", Field: "step"}})
		case r.URL.EscapedPath() == "/api/v1/queues/a%2Fb/stats":
			_ = json.NewEncoder(w).Encode(wire.QueueStats{Queue: "a/b", Step: "1h"}) // no buckets: null
		case r.URL.Path == "/api/v1/queues/emails/stats":
			_ = json.NewEncoder(w).Encode(wire.QueueStats{Queue: "emails", Step: "1m",
				Buckets: []wire.QueueStatsBucket{{Enqueued: 3, Completed: 2, ProcessingTime: wire.ProcessingTime{Count: 2, P99: 12.5}}}})
		case r.URL.Path == "/api/v1/queues/emails/scale":
			_ = json.NewEncoder(w).Encode(wire.QueueScale{Queue: "emails", Backlog: 1, InFlight: 2, Demand: 3})
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: &wire.Error{Code: "not_found", Message: "queue not found"}})
		}
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "key")
	t.Cleanup(c.CloseIdleConnections)
	ctx := context.Background()

	st, err := c.QueueStats(ctx, "emails", client.StatsQuery{})
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Buckets[0].Enqueued)
	require.Equal(t, 12.5, st.Buckets[0].ProcessingTime.P99)
	from := time.Date(2026, 11, 29, 6, 30, 0, 0, time.FixedZone("CET", 3600))
	_, err = c.QueueStats(ctx, "emails", client.StatsQuery{From: from, To: from.Add(2 * time.Hour), Step: client.StatsStepHour})
	require.NoError(t, err)
	st, err = c.QueueStats(ctx, "a/b", client.StatsQuery{Step: client.StatsStepHour})
	require.NoError(t, err)
	require.NotNil(t, st.Buckets, "no buckets reads as an empty list")
	require.Empty(t, st.Buckets)

	_, err = c.QueueStats(ctx, "emails", client.StatsQuery{Step: "2m"})
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, http.StatusBadRequest, e.Status)
	require.Equal(t, "step", e.Field)

	sc, err := c.QueueScale(ctx, "emails")
	require.NoError(t, err)
	require.Equal(t, wire.QueueScale{Queue: "emails", Backlog: 1, InFlight: 2, Demand: 3}, *sc)
	_, err = c.QueueScale(ctx, "other")
	require.True(t, client.IsNotFound(err), "%v", err)

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{
		"/api/v1/queues/emails/stats",
		"/api/v1/queues/emails/stats?from=2026-11-29T05%3A30%3A00Z&step=1h&to=2026-11-29T07%3A30%3A00Z",
		"/api/v1/queues/a%2Fb/stats?step=1h",
		"/api/v1/queues/emails/stats?step=2m",
		"/api/v1/queues/emails/scale",
		"/api/v1/queues/other/scale",
	}, uris)
}
