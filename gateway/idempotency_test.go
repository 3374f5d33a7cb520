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
		if controlCreates[path] != nil {
			continue // TestIdempotencyKeyReachesControl
		}
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
		{http.MethodPost, "/api/v1/keys/key_1/rotate"},
		{http.MethodPost, "/api/v1/shards/join-tokens"},
		{http.MethodPost, "/api/v1/backups/bkp_1/restore"},
		{http.MethodPatch, "/api/v1/namespaces/default"},
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

// controlCreates are the routes of wire.IdempotentRoutes served through
// control, each with a body it takes and the status of a first create.
var controlCreates = map[string]*struct {
	body   map[string]any
	status int
}{
	"/api/v1/namespaces": {map[string]any{"name": "keyed"}, http.StatusCreated},
	"/api/v1/keys":       {map[string]any{"name": "ci", "role": "producer", "namespaces": []string{"default"}}, http.StatusCreated},
	"/api/v1/roles": {map[string]any{"name": "pusher", "permissions": []map[string]any{
		{"actions": []string{"job.enqueue"}, "namespaces": []string{"default"}, "queues": []string{"*"}}}}, http.StatusCreated},
	"/api/v1/backups": {map[string]any{"namespace": "default"}, http.StatusAccepted},
}

// A create the gateway serves through control sends its Idempotency-Key
// there, and control's replay is answered 200 with Idempotency-Replayed
// and the first answer; without a key nothing is sent.
func TestIdempotencyKeyReachesControl(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	for path, c := range controlCreates {
		first := b.do(t, http.MethodPost, path, owner, c.body, wire.IdempotencyKeyHeader, "k")
		require.Equal(t, c.status, first.status, "%s: %s", path, first.body)
		require.Empty(t, first.header.Get(wire.IdempotencyReplayedHeader))
		again := b.do(t, http.MethodPost, path, owner, c.body, wire.IdempotencyKeyHeader, "k")
		require.Equal(t, http.StatusOK, again.status, "%s: %s", path, again.body)
		require.Equal(t, "true", again.header.Get(wire.IdempotencyReplayedHeader), path)
		require.JSONEq(t, string(first.body), string(again.body), path)
	}
	// Without a key, the same create is a create again (here refused as
	// a taken name: control saw no key).
	r := b.do(t, http.MethodPost, "/api/v1/roles", owner, controlCreates["/api/v1/roles"].body)
	r.requireError(t, 409, apierr.Conflict)
}

// A namespace create's replay gives its shard the retention control has
// now: after a first whose shard step failed (503, control's retention
// taken back) the shard is told none, as control holds; after a first
// that succeeded, the retention again. The answer is the first one's.
func TestIdempotentNamespaceCreateReplaysItsRetention(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	b.control.PlaceNewOn(b.shard.addr())
	body := map[string]any{"name": "sms", "retention": "72h"}

	b.shard.setHandler(settingsShard(http.StatusInternalServerError))
	r := b.do(t, http.MethodPost, "/api/v1/namespaces", owner, body, wire.IdempotencyKeyHeader, "ns-1")
	r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Empty(t, b.control.NamespaceSettings(tenantA, "sms").Retention)
	b.shard.setHandler(settingsShard(http.StatusOK))
	r = b.do(t, http.MethodPost, "/api/v1/namespaces", owner, body, wire.IdempotencyKeyHeader, "ns-1")
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "true", r.header.Get(wire.IdempotencyReplayedHeader))
	put := b.shard.last(t)
	require.Equal(t, "PUT /api/v1/namespace", put.Method+" "+put.URI)
	require.JSONEq(t, `{"retention":null}`, put.Body, "control's retention, none")

	body = map[string]any{"name": "mms", "retention": "72h"}
	first := b.do(t, http.MethodPost, "/api/v1/namespaces", owner, body, wire.IdempotencyKeyHeader, "ns-2")
	require.Equal(t, http.StatusCreated, first.status, "body: %s", first.body)
	seen := b.shard.count()
	again := b.do(t, http.MethodPost, "/api/v1/namespaces", owner, body, wire.IdempotencyKeyHeader, "ns-2")
	require.Equal(t, http.StatusOK, again.status, "body: %s", again.body)
	require.JSONEq(t, string(first.body), string(again.body))
	require.Equal(t, seen+1, b.shard.count())
	require.JSONEq(t, `{"retention":"72h"}`, b.shard.last(t).Body)
}
