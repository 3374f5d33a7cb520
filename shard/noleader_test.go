package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func TestNoLeaderIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", ClusterSecret: testSecret} // not bootstrapped: never elects
	srv, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Stop() })
	b := &bundle{t: t, srv: srv, url: "http://" + srv.Addr()}

	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"})
	require.Equal(t, 503, r.Status, string(r.Raw))
	require.Equal(t, "no_leader", errCode(r))
	require.Equal(t, "1", r.Header.Get("Retry-After"))
	r = b.call("GET", "/readyz", nil)
	require.Equal(t, 503, r.Status)
}

func TestShardAPINeedsClusterSecret(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, auth := range []string{"", "Bearer wrong-secret-wrong-secret", "Basic " + testSecret} {
		r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, "Authorization", auth)
		require.Equal(t, 401, r.Status, auth)
		require.Equal(t, "unauthenticated", errCode(r))
	}
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
	require.Equal(t, wire.ShardNamespaceHeader, errField(r))
	require.Equal(t, 200, b.call("GET", "/healthz", nil, "Authorization", "").Status)
}
