package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// localNode stands for a self-hosted node: the newest trust bundle it
// holds, and when it came.
type localNode struct {
	mu sync.Mutex
	b  wire.TrustBundle
	at time.Time
	ok bool
}

func (n *localNode) set(b wire.TrustBundle, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.b, n.at, n.ok = b, at, true
}

func (n *localNode) bundle() (wire.TrustBundle, time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b, n.at, n.ok
}

// trustBundle is tenant A's bundle for shard sh_a holding "onprem",
// signed keys by s, with keys revoked.
func trustBundle(t *testing.T, s controlfake.Signer, revoked ...string) wire.TrustBundle {
	jwks, err := json.Marshal(tenancy.JWKS{Keys: []tenancy.JWK{s.JWK()}})
	require.NoError(t, err)
	return wire.TrustBundle{TenantID: tenantA, ShardID: "sh_a", JWKS: jwks,
		Revocations: wire.Revocations{Version: uint64(len(revoked) + 1), Revoked: append([]string{}, revoked...)},
		Roles:       wire.TenantRoles{Roles: []wire.Role{}},
		Namespaces:  []wire.NamespacePlacement{{Namespace: wire.Namespace{Name: "onprem"}, ShardID: "sh_a"}}}
}

// startLocal starts a gateway as node's local API in front of a fake
// shard on a Unix socket.
func startLocal(t *testing.T, node *localNode, maxAge time.Duration, opts ...func(*LocalTrust)) (*bundle, *fakeShard) {
	fs, addr := newUnixFakeShard(t)
	lt := &LocalTrust{TenantID: tenantA, ShardID: "sh_a", ShardAddr: addr, Bundle: node.bundle}
	for _, o := range opts {
		o(lt)
	}
	gw, err := New(Config{Addr: "127.0.0.1:0", RevocationInterval: 20 * time.Millisecond, RevocationMaxAge: maxAge,
		JWKSMinRefresh: 10 * time.Millisecond, ShutdownTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler),
		Local: lt})
	require.NoError(t, err)
	require.NoError(t, gw.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, gw.Stop()) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &bundle{gw: gw, base: "http://" + gw.Addr(), http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}, fs
}

// A local API judges the tenant's keys by the node's trust bundle, as a
// hosted gateway judges them by control, and serves only the tenant's
// namespaces on the shard, over the node's socket: before any bundle it
// refuses every key, saying why; a key revoked in the bundle is refused;
// another tenant's key, or a namespace elsewhere, is a 404 that never
// reaches the node; tenant administration is not served here.
func TestLocalAPIJudgesKeysByTheTrustBundle(t *testing.T) {
	t.Parallel()
	s := newSigner(t, "sig-1")
	node := &localNode{}
	b, fs := startLocal(t, node, time.Minute)
	worker := s.Sign(claimsFor(tenantA, "key_w", tenancy.RoleWorker, "onprem"))

	e := b.do(t, http.MethodPost, "/api/v1/fetch", worker, map[string]any{"queues": []string{"q"}}).requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Contains(t, e.Message, "no trust bundle")
	require.Zero(t, fs.count())

	node.set(trustBundle(t, s, "key_gone"), time.Now())
	select {
	case <-b.gw.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the local API never became ready with a bundle")
	}
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", worker, enqueueBody, wire.NamespaceHeader, "onprem")
	require.Equal(t, http.StatusForbidden, r.status, "a worker may not enqueue: RBAC is the gateway's own: %s", r.body)
	producer := s.Sign(claimsFor(tenantA, "key_p", tenancy.RoleProducer, "onprem"))
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	got := fs.last(t)
	require.Equal(t, tenancy.ShardNamespace(tenantA, "onprem"), got.Header.Get(wire.ShardNamespaceHeader))
	require.Empty(t, got.Header.Get("Authorization"), "the key never reaches the node")

	seen := fs.count()
	gone := s.Sign(claimsFor(tenantA, "key_gone", tenancy.RoleProducer, "onprem"))
	b.do(t, http.MethodPost, "/api/v1/enqueue", gone, enqueueBody).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	other := s.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	e = b.do(t, http.MethodPost, "/api/v1/enqueue", other, enqueueBody, wire.NamespaceHeader, "onprem").requireError(t, http.StatusNotFound, apierr.NotFound)
	require.Contains(t, e.Message, "onprem")
	owner := s.Sign(claimsFor(tenantA, "key_o", tenancy.RoleOwner, "*"))
	b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.NamespaceHeader, "hosted").requireError(t, http.StatusNotFound, apierr.NotFound)
	for _, path := range []string{"/api/v1/keys", "/api/v1/namespaces", "/api/v1/usage", "/api/v1/backups", "/api/v1/shards"} {
		e := b.do(t, http.MethodGet, path, owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
		require.Contains(t, e.Message, "hosted gateway", path)
	}
	require.Equal(t, seen, fs.count(), "none of those reached the node")

	// Revoked in a newer bundle: refused within a revocation poll.
	node.set(trustBundle(t, s, "key_gone", "key_p"), time.Now())
	eventually(t, func() bool {
		return b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody).status == http.StatusUnauthorized
	}, "the producer key revoked by the new bundle")
}

// Without a new bundle for its bound (the hosted service unreachable that
// long), a local API refuses every key with revocations_stale, saying
// so; a bundle arriving makes it serve again. A bundle kept from before a
// restart counts from when it came, not from the start.
func TestLocalAPIRefusesKeysOnceItsBundleIsOld(t *testing.T) {
	t.Parallel()
	s := newSigner(t, "sig-1")
	node := &localNode{}
	node.set(trustBundle(t, s), time.Now().Add(-time.Hour))
	b, fs := startLocal(t, node, 30*time.Second)
	producer := s.Sign(claimsFor(tenantA, "key_p", tenancy.RoleProducer, "onprem"))
	eventually(t, func() bool {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody)
		return r.status == http.StatusServiceUnavailable && r.apiError(t).Code == apierr.RevocationsStale
	}, "an hour-old bundle refused")
	e := b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody).requireError(t, http.StatusServiceUnavailable, apierr.RevocationsStale)
	require.Contains(t, e.Message, "has not heard from the hosted service")
	require.Contains(t, e.Message, "30s")
	require.Zero(t, fs.count())

	node.set(trustBundle(t, s), time.Now())
	eventually(t, func() bool {
		return b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody).status == http.StatusCreated
	}, "a fresh bundle serves again")
}

func TestLocalAPIConfig(t *testing.T) {
	t.Parallel()
	ok := func() (wire.TrustBundle, time.Time, bool) { return wire.TrustBundle{}, time.Time{}, false }
	for _, c := range []Config{
		{Local: &LocalTrust{ShardID: "s", ShardAddr: "unix:/x", Bundle: ok}},
		{Local: &LocalTrust{TenantID: tenantA, ShardID: "s", ShardAddr: "127.0.0.1:1", Bundle: ok}},
		{Local: &LocalTrust{TenantID: tenantA, ShardID: "s", ShardAddr: "unix:/x"}},
		{Local: &LocalTrust{TenantID: tenantA, ShardID: "s", ShardAddr: "unix:/x", Bundle: ok}, ControlURL: "https://c"},
		{Local: &LocalTrust{TenantID: tenantA, ShardID: "s", ShardAddr: "unix:/x", Bundle: ok}, TunnelAddr: "127.0.0.1:0"},
	} {
		_, err := New(c)
		require.Error(t, err, "%+v", c.Local)
	}
	_, err := New(Config{Local: &LocalTrust{TenantID: tenantA, ShardID: "s", ShardAddr: "unix:/x", Bundle: ok}})
	require.NoError(t, err)
}
