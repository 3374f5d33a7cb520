package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A creating request's Idempotency-Key reaches the shard (which checks it
// and keeps the record), and the shard's Idempotency-Replayed comes back;
// a route that does not take a key refuses it before the shard sees
// anything.
func TestIdempotencyKeyPassesThrough(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	for path := range wire.IdempotentRoutes {
		r := b.do(t, http.MethodPost, path, owner, map[string]any{}, wire.IdempotencyKeyHeader, "k-"+path)
		require.Less(t, r.status, 300, "%s: %s", path, r.body)
		got := b.shard.last(t)
		require.Equal(t, path, got.URI)
		require.Equal(t, "k-"+path, got.Header.Get(wire.IdempotencyKeyHeader), path)
		require.Empty(t, r.header.Get(wire.IdempotencyReplayedHeader))
	}
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody)
	require.Equal(t, 201, r.status, string(r.body))
	require.Empty(t, b.shard.last(t).Header.Values(wire.IdempotencyKeyHeader), "none sent, none passed")

	b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(wire.IdempotencyReplayedHeader, "true")
		writeJSON(w, http.StatusOK, map[string]any{"job_id": "job_01HX0000000000000000000000"})
	})
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.IdempotencyKeyHeader, "k")
	require.Equal(t, 200, r.status, string(r.body))
	require.Equal(t, "true", r.header.Get(wire.IdempotencyReplayedHeader))

	seen := b.shard.count()
	for _, rt := range []struct{ method, path string }{
		{http.MethodPost, "/api/v1/jobs/job_01HX0000000000000000000000/retry"},
		{http.MethodPost, "/api/v1/jobs/bulk"},
		{http.MethodPost, "/api/v1/schedules/nightly/run"},
		{http.MethodPost, "/api/v1/keys"},
		{http.MethodPost, "/api/v1/namespaces"},
		{http.MethodPost, "/api/v1/roles"},
		{http.MethodPost, "/api/v1/backups"},
		{http.MethodGet, "/api/v1/queues"},
	} {
		r := b.do(t, rt.method, rt.path, owner, map[string]any{}, wire.IdempotencyKeyHeader, "k")
		e := r.requireError(t, 400, apierr.BadRequest)
		require.Equal(t, wire.IdempotencyKeyHeader, e.Field, rt.path)
	}
	require.Equal(t, seen, b.shard.count(), "a refused key reached no shard")

	// A bad key, an empty one or two of them on a route that takes one.
	for _, bad := range []string{"", strings.Repeat("k", 256), "caf\u00e9"} {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.IdempotencyKeyHeader, bad)
		e := r.requireError(t, 400, apierr.BadRequest)
		require.Equal(t, wire.IdempotencyKeyHeader, e.Field, "%q", bad)
	}
	req, err := http.NewRequest(http.MethodPost, b.base+"/api/v1/enqueue", strings.NewReader(`{"queue":"q"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+owner)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add(wire.IdempotencyKeyHeader, "a")
	req.Header.Add(wire.IdempotencyKeyHeader, "b")
	resp, err := b.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 400, resp.StatusCode)
	require.Equal(t, seen, b.shard.count(), "a refused key reached no shard")
}
