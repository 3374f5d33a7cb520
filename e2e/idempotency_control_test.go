package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// keyedAnswer is an answer to a raw request, read whole.
type keyedAnswer struct {
	status   int
	replayed string
	body     []byte
}

// keyedPost POSTs body to the shared gateway with token and, when not
// empty, an Idempotency-Key.
func keyedPost(t *testing.T, token, path, key string, body any) keyedAnswer {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, shared.gateway+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(wire.IdempotencyKeyHeader, key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return keyedAnswer{status: resp.StatusCode, replayed: resp.Header.Get(wire.IdempotencyReplayedHeader), body: out}
}

// The creates the gateway serves through control, each sent twice with
// one Idempotency-Key through the gateway of `jobbie dev`: the second is
// the first answer (200, Idempotency-Replayed) and creates nothing; the
// key with another body is 422 naming the header; another tenant's same
// key is its own.
func TestControlCreatesTakeIdempotencyKeys(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	_, other := shared.tenant(t)

	for _, c := range []struct {
		path        string
		status      int
		body, other map[string]any
	}{
		{"/api/v1/namespaces", http.StatusCreated, map[string]any{"name": "idem-ns", "retention": "24h"}, map[string]any{"name": "idem-other"}},
		{"/api/v1/keys", http.StatusCreated, map[string]any{"name": "ci", "role": "producer"}, map[string]any{"name": "cd", "role": "producer"}},
		{"/api/v1/roles", http.StatusCreated, map[string]any{"name": "pusher", "permissions": []map[string]any{
			{"actions": []string{"job.enqueue"}, "namespaces": []string{"default"}, "queues": []string{"*"}}}}, map[string]any{"name": "reader",
			"permissions": []map[string]any{{"actions": []string{"job.read"}, "namespaces": []string{"default"}, "queues": []string{"*"}}}}},
		{"/api/v1/backups", http.StatusAccepted, map[string]any{"namespace": "default"}, map[string]any{"namespace": "idem-ns"}},
	} {
		key := "idem" + c.path
		first := keyedPost(t, ct.OwnerKey, c.path, key, c.body)
		require.Equal(t, c.status, first.status, "%s: %s", c.path, first.body)
		require.Empty(t, first.replayed)
		again := keyedPost(t, ct.OwnerKey, c.path, key, c.body)
		require.Equal(t, http.StatusOK, again.status, "%s: %s", c.path, again.body)
		require.Equal(t, "true", again.replayed, c.path)
		require.JSONEq(t, string(first.body), string(again.body), c.path)

		r := keyedPost(t, ct.OwnerKey, c.path, key, c.other)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", c.path, r.body)
		var e wire.ErrorBody
		require.NoError(t, json.Unmarshal(r.body, &e))
		require.Equal(t, wire.CodeIdempotencyKeyReused, e.Error.Code)
		require.Equal(t, wire.IdempotencyKeyHeader, e.Error.Field)

		r = keyedPost(t, other.OwnerKey, c.path, key, c.body)
		require.Equal(t, c.status, r.status, "%s: another tenant's key is its own: %s", c.path, r.body)
		require.Empty(t, r.replayed)
	}

	// A tenant's key is one record across these routes.
	r := keyedPost(t, ct.OwnerKey, "/api/v1/roles", "idem/api/v1/keys", map[string]any{"name": "x", "permissions": []map[string]any{
		{"actions": []string{"job.read"}, "namespaces": []string{"default"}, "queues": []string{"*"}}}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "body: %s", r.body)

	keys, err := owner.ListKeys(ctx(t))
	require.NoError(t, err)
	require.Len(t, keys, 2, "the owner and one ci key")
	backups, err := owner.ListBackups(ctx(t), "default")
	require.NoError(t, err)
	require.Len(t, backups, 1, "one backup")
	ns, err := owner.GetNamespace(ctx(t), "idem-ns")
	require.NoError(t, err)
	require.Equal(t, "24h", ns.Retention)

	// The replayed token is the first, and it works.
	var created wire.CreatedKey
	require.NoError(t, json.Unmarshal(keyedPost(t, ct.OwnerKey, "/api/v1/keys", "idem/api/v1/keys", map[string]any{"name": "ci", "role": "producer"}).body, &created))
	r = keyedPost(t, created.Token, "/api/v1/enqueue", "", map[string]any{"queue": "idem.ctl"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)

	// A create that does not take a key refuses it.
	r = keyedPost(t, ct.OwnerKey, "/api/v1/shards/join-tokens", "idem-2", map[string]any{"name": "edge"})
	require.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)
}
