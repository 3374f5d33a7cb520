package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// selfHostedNode runs an agent for node of shard, owned by tenant, with a
// certificate of the self-hosted CA own, serving a fake shard.
func selfHostedNode(t *testing.T, b *bundle, own *pki.CA, shard, node, tenant string) (*tunnel.Agent, *fakeShard) {
	t.Helper()
	id := pkitest.TenantShard(shard, node, tenant)
	certPEM, keyPEM, err := own.Issue(id, nil, time.Hour)
	require.NoError(t, err)
	creds, err := pki.NewCredentials(certPEM, keyPEM, append(append([]byte{}, own.CertPEM()...), b.ca.CertPEM()...))
	require.NoError(t, err)
	fs := &fakeShard{id: id, handler: created}
	a, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: b.gw.TunnelAddr(), TLS: creds, Handler: fs,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Logger: b.gw.log})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return a, fs
}

func waitState(t *testing.T, a *tunnel.Agent, what string, ok func(tunnel.AgentState) bool) tunnel.AgentState {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := a.Changed()
		if st := a.State(); ok(st) {
			return st
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("agent never %s: %+v", what, a.State())
		}
	}
}

func TestSelfHostedShardServedThroughItsTunnel(t *testing.T) {
	t.Parallel()
	own, err := pki.NewCA("self-hosted shards")
	require.NoError(t, err)
	b := newBundle(t)
	b.control.Shards.SelfHosted = []wire.SelfHostedShard{{ID: "sh_a", TenantID: tenantA, Nodes: []string{"n1"}}}
	b.control.AddNamespace(tenantA, "onprem", "sh_a", "tunnel://sh_a/n1")
	b.start(t, func(c *Config) { c.TunnelAddr, c.SelfHostedCA = "127.0.0.1:0", own.CertPEM() })
	b.waitReady(t)
	key := b.key(t, tenancy.RoleOwner, "*")

	a, fs := selfHostedNode(t, b, own, "sh_a", "n1", tenantA)
	waitState(t, a, "connected", func(st tunnel.AgentState) bool { return st.Connected })
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody, wire.NamespaceHeader, "onprem")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	fs.mu.Lock()
	require.Len(t, fs.seen, 1)
	require.Equal(t, pkitest.Gateway, fs.seen[0].Peer, "the node sees the gateway's identity through the tunnel")
	fs.mu.Unlock()
	var list wire.OwnedShardList
	b.control.Lock()
	b.control.Shards.ByTenant = map[string][]wire.OwnedShard{tenantA: {{ID: "sh_a", Name: "dc", Nodes: []string{"n1"}}}}
	b.control.Unlock()
	b.do(t, http.MethodGet, "/api/v1/shards", key, nil).decode(t, &list)
	require.Equal(t, []string{"n1"}, list.Shards[0].Connected)
	checkShardHealth(t, b, key, fs)
	// The hosted shard never saw it.
	b.shard.mu.Lock()
	require.Empty(t, b.shard.seen)
	b.shard.mu.Unlock()

	// Refused in the handshake: a node that did not join, a node naming
	// another tenant, a shard control does not list, and a node of the
	// deployment's own CA (trusted for everything else, not here).
	for _, bad := range []struct{ shard, node, tenant string }{
		{"sh_a", "n2", tenantA}, {"sh_a", "n1", tenantB}, {"sh_b", "n1", tenantA},
	} {
		ba, _ := selfHostedNode(t, b, own, bad.shard, bad.node, bad.tenant)
		waitState(t, ba, "refused", func(st tunnel.AgentState) bool { return st.FailedAttempts > 0 && !st.Connected })
	}
	hostedCreds := b.ca.Creds(t, pkitest.TenantShard("sh_a", "n1", tenantA))
	ha, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: b.gw.TunnelAddr(), TLS: hostedCreds, Handler: fs, MinBackoff: 20 * time.Millisecond, Logger: b.gw.log})
	require.NoError(t, err)
	hctx, hcancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { defer close(hdone); _ = ha.Run(hctx) }()
	waitState(t, ha, "refused", func(st tunnel.AgentState) bool { return st.FailedAttempts > 0 && !st.Connected })
	hcancel()
	<-hdone
	require.True(t, a.State().Connected, "the joined node stays connected")

	// Revoked (control lists it no more): cut off, and refused from then on.
	seen := fs.count()
	b.control.Lock()
	b.control.Shards.SelfHosted = nil
	b.control.Unlock()
	waitState(t, a, "cut off", func(st tunnel.AgentState) bool { return !st.Connected })
	e := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody, wire.NamespaceHeader, "onprem").apiError(t)
	require.Equal(t, apierr.Unavailable, e.Code, "%+v", e)
	require.Equal(t, seen, fs.count())
}

// checkShardHealth: GET /api/v1/shards carries the health a connected
// node answers over its tunnel, asked with the gateway's identity; a node
// that answers no health, or not in time, leaves it out, and the list is
// still served. Another tenant sees none of it.
func checkShardHealth(t *testing.T, b *bundle, key string, fs *fakeShard) {
	t.Helper()
	want := wire.ClusterHealth{ShardID: "sh_a", LeaderID: "n1", Healthy: true,
		Nodes: []wire.ClusterNode{{ID: "n1", Role: wire.NodeLeader, Status: wire.NodeHealthy}}}
	health := func(h wire.ClusterHealth) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v1/cluster" {
				created(w, r)
				return
			}
			writeJSON(w, http.StatusOK, h)
		}
	}
	fs.setHandler(health(want))
	var list wire.OwnedShardList
	b.do(t, http.MethodGet, "/api/v1/shards", key, nil).decode(t, &list)
	require.Equal(t, &want, list.Shards[0].Health)
	asked := fs.last(t)
	require.Equal(t, "GET /api/v1/cluster", asked.Method+" "+asked.URI)
	require.Equal(t, pkitest.Gateway, asked.Peer)

	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	r := b.do(t, http.MethodGet, "/api/v1/shards", keyB, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"shards":[]}`, string(r.body))

	// An answer about another shard, an error, and no answer in time.
	other := want
	other.ShardID = "sh_z"
	release := make(chan struct{})
	defer close(release)
	for _, h := range []http.HandlerFunc{
		health(other),
		func(w http.ResponseWriter, _ *http.Request) { writeErr(w, apierr.New(apierr.Internal, "boom")) },
		func(w http.ResponseWriter, _ *http.Request) { <-release; created(w, nil) },
	} {
		fs.setHandler(h)
		r := b.do(t, http.MethodGet, "/api/v1/shards", key, nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		var list wire.OwnedShardList
		r.decode(t, &list)
		require.Equal(t, "sh_a", list.Shards[0].ID)
		require.Equal(t, []string{"n1"}, list.Shards[0].Connected)
		require.Nil(t, list.Shards[0].Health, "body: %s", r.body)
		require.NotContains(t, string(r.body), `"health"`)
	}
	fs.setHandler(created)
}
