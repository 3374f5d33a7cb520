package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

func TestBatchWorkRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	worker := b.key(t, tenancy.RoleWorker, "default")

	// ack/batch reaches the shard under its own path, with the batch body limit.
	r := b.do(t, http.MethodPost, "/api/v1/ack/batch", worker, jsonOfSize(2<<20))
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	got := b.shard.last(t)
	require.Equal(t, "/api/v1/ack/batch", got.URI)
	require.Len(t, got.Body, 2<<20)

	b.do(t, http.MethodPost, "/api/v1/fetch/batch", b.key(t, tenancy.RoleProducer, "default"), map[string]any{"queues": []string{"q"}}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPost, "/api/v1/ack/batch", b.key(t, tenancy.RoleProducer, "default"), map[string]any{"acks": []any{}}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
}

// fetch/batch is a long-poll: the gateway waits out the worker's timeout,
// beyond a shard timeout shorter than the shard's wait. The short timeout
// is this test's alone: a 2 MiB ack/batch under the race detector on a
// loaded machine can take longer than it to reach the shard.
func TestBatchFetchOutlastsShardTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ShardTimeout = 300 * time.Millisecond })
	worker := b.key(t, tenancy.RoleWorker, "default")
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jobs":[]}`))
	})
	r := b.do(t, http.MethodPost, "/api/v1/fetch/batch", worker, map[string]any{"queues": []string{"q"}, "max": 10, "timeout": 2})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"jobs":[]}`, string(r.body))
}
