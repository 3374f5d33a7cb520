package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

const trustPath = "/internal/v1/trust"

// selfHosted runs a node as one of pkitest.Tenant's self-hosted shard s1.
func selfHosted(t *testing.T, node string) func(*Config) {
	return func(c *Config) {
		c.NodeID = node
		c.TLS = testCA(t).Creds(t, pkitest.TenantShard("s1", node, pkitest.Tenant))
	}
}

// trustBundle is a bundle for pkitest.Tenant's shard s1; version marks it.
func trustBundle(version uint64) wire.TrustBundle {
	return wire.TrustBundle{
		TenantID: pkitest.Tenant, ShardID: "s1", IssuedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC),
		JWKS:        json.RawMessage(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`),
		Revocations: wire.Revocations{Version: version, Revoked: []string{"key_01hx0000000000000000000000"}},
		Roles:       wire.TenantRoles{Version: version, Roles: []wire.Role{}},
		Namespaces: []wire.NamespacePlacement{
			{Namespace: wire.Namespace{Name: "default"}, ShardID: "s1"},
			{Namespace: wire.Namespace{Name: "emails"}, ShardID: "s1"},
		},
	}
}

// requireBundle asserts the node holds the bundle of version, received at.
func requireBundle(t *testing.T, n *Node, version uint64, at time.Time) {
	t.Helper()
	b, got, ok := n.TrustBundle()
	require.True(t, ok, "the node holds a bundle")
	require.Equal(t, version, b.Revocations.Version)
	require.True(t, got.Equal(at), "received at %s, not %s", got, at)
}

// A gateway's push, over the node's tunnel, is kept and read through
// Node.TrustBundle; every push that is not this node's, or not a bundle,
// is refused and changes nothing.
func TestTrustPushAndRefusals(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "s.sock")
	node := setup(t, selfHosted(t, "n1"), func(c *Config) { c.SocketPath = sock })
	b := overTunnel(t, node)
	_, _, ok := b.srv.TrustBundle()
	require.False(t, ok, "nothing before the first push")

	before := time.Now()
	r := b.call("POST", trustPath, trustBundle(1))
	require.Equal(t, 204, r.Status, string(r.Raw))
	got, at, ok := b.srv.TrustBundle()
	require.True(t, ok)
	require.False(t, at.Before(before.Truncate(time.Microsecond)) || at.After(time.Now()), "received at %s", at)
	want := trustBundle(1)
	require.Equal(t, want.Namespaces, got.Namespaces)
	require.JSONEq(t, string(want.JWKS), string(got.JWKS))
	require.Equal(t, want.Revocations, got.Revocations)
	require.True(t, want.IssuedAt.Equal(got.IssuedAt))

	// The next push replaces it.
	r = b.call("POST", trustPath, trustBundle(2))
	require.Equal(t, 204, r.Status, string(r.Raw))
	_, at, _ = b.srv.TrustBundle()
	requireBundle(t, b.srv, 2, at)

	refused := func(name string, status int, field string, body any) {
		t.Helper()
		r := b.call("POST", trustPath, body)
		require.Equal(t, status, r.Status, "%s: %s", name, r.Raw)
		if field != "" {
			require.Equal(t, field, errField(r), "%s: %s", name, r.Raw)
		}
		requireBundle(t, b.srv, 2, at)
	}
	with := func(f func(*wire.TrustBundle)) wire.TrustBundle {
		x := trustBundle(3)
		f(&x)
		return x
	}
	refused("another tenant", 403, "tenant_id", with(func(x *wire.TrustBundle) { x.TenantID = "t_zzzzzzzzzzzzzzzzzzzzzzzzzz" }))
	refused("no tenant", 403, "tenant_id", with(func(x *wire.TrustBundle) { x.TenantID = "" }))
	refused("another shard", 403, "shard_id", with(func(x *wire.TrustBundle) { x.ShardID = "s2" }))
	for name, jwks := range map[string]string{
		"jwks an array":      `[{"kty":"OKP"}]`,
		"jwks a string":      `"keys"`,
		"jwks null":          `null`,
		"jwks without keys":  `{"kid":"k1"}`,
		"jwks keys null":     `{"keys":null}`,
		"jwks keys a object": `{"keys":{"kty":"OKP"}}`,
	} {
		refused(name, 400, "", with(func(x *wire.TrustBundle) { x.JWKS = json.RawMessage(jwks) }))
	}
	r = b.call("POST", trustPath, `{"tenant_id":"`+pkitest.Tenant+`","shard_id":"s1","revocations":{"version":1,"revoked":[]},"roles":{"roles":[],"version":1},"namespaces":[]}`)
	require.Equal(t, 400, r.Status, "no jwks: %s", r.Raw)
	require.Equal(t, "jwks", errField(r))
	refused("a key not an object", 400, "jwks.keys[1]", with(func(x *wire.TrustBundle) { x.JWKS = json.RawMessage(`{"keys":[{"kid":"a"},"b"]}`) }))
	refused("a namespace of another shard", 400, "namespaces[1].shard_id", with(func(x *wire.TrustBundle) { x.Namespaces[1].ShardID = "s2" }))
	refused("another tenant's roles version", 400, "revocations.roles[0].tenant_id", with(func(x *wire.TrustBundle) {
		x.Revocations.Roles = []wire.RolesVersion{{TenantID: "t_zzzzzzzzzzzzzzzzzzzzzzzzzz", Version: 4}}
	}))
	refused("an unknown field", 400, "surprise", strings.Replace(string(mustJSON(trustBundle(3))), `{`, `{"surprise":1,`, 1))
	refused("not json", 400, "", "{not json")
	refused("empty", 400, "", "")

	// Too large: told the limit, with a length given and when chunked.
	big := with(func(x *wire.TrustBundle) {
		x.JWKS = json.RawMessage(`{"keys":[{"kid":"` + strings.Repeat("k", wire.MaxTrustBundleBytes) + `"}]}`)
	})
	raw := mustJSON(big)
	r = b.call("POST", trustPath, raw)
	require.Equal(t, 413, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), "8388608")
	r = b.chunked(trustPath, raw)
	require.Equal(t, 413, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), "8388608")
	requireBundle(t, b.srv, 2, at)

	// Only a gateway: the shard's own members are refused by the route
	// (403), operators and control at the handshake of the node's own
	// listener (the tunnel carries a gateway alone).
	r = node.as(pkitest.TenantShard("s1", "n2", pkitest.Tenant)).call("POST", trustPath, trustBundle(3))
	require.Equal(t, 403, r.Status, string(r.Raw))
	for _, id := range []pki.Identity{pkitest.Operator, pkitest.Control} {
		res, err := client(t, id, nil).Post(node.url+trustPath, "application/json", bytes.NewReader(mustJSON(trustBundle(3))))
		if err == nil {
			res.Body.Close()
		}
		require.ErrorContains(t, err, "tls: bad certificate", id.String())
	}
	requireBundle(t, b.srv, 2, at)

	// Over the Unix socket the caller reads as the local gateway: refused,
	// so the local API can never hand the node its own trust.
	res, raw := overSocket(t, sock, mustJSON(trustBundle(3)))
	require.Equal(t, 403, res.StatusCode, string(raw))
	require.Contains(t, string(raw), "Unix socket")
	requireBundle(t, b.srv, 2, at)
}

// chunked posts body with no Content-Length.
func (b *bundle) chunked(path string, body []byte) resp {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.url+path, io.MultiReader(bytes.NewReader(body)))
	require.NoError(b.t, err)
	req.ContentLength = -1
	res, err := b.client.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(b.t, err)
	return resp{Status: res.StatusCode, Raw: raw}
}

// overSocket posts a trust bundle to the node's Unix socket.
func overSocket(t *testing.T, sock string, body []byte) (*http.Response, []byte) {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	res, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Post("http://localhost"+trustPath, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, raw
}

// A hosted node takes no trust bundle, from a gateway or anyone.
func TestTrustRefusedByHostedNode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", trustPath, trustBundle(1))
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), "only self-hosted")
	b2 := trustBundle(1)
	b2.TenantID = ""
	r = b.call("POST", trustPath, b2)
	require.Equal(t, 409, r.Status, string(r.Raw))
	_, _, ok := b.srv.TrustBundle()
	require.False(t, ok)
}

// A restart finds the bundle and the time it was received before it.
func TestTrustBundleSurvivesRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, selfHosted(t, "n1"))
	r := overTunnel(t, b).call("POST", trustPath, trustBundle(5))
	require.Equal(t, 204, r.Status, string(r.Raw))
	want, at, ok := b.srv.TrustBundle()
	require.True(t, ok)
	require.NoError(t, b.srv.Stop())

	b2 := start(t, b.dir, selfHosted(t, "n1"))
	got, at2, ok := b2.srv.TrustBundle()
	require.True(t, ok)
	require.True(t, at.Equal(at2), "received at %s, after the restart %s", at, at2)
	require.Equal(t, want.Revocations, got.Revocations)
	require.Equal(t, want.Namespaces, got.Namespaces)
	require.JSONEq(t, string(want.JWKS), string(got.JWKS))

	// The same data directory under a hosted node's certificate: the
	// bundle is not its own.
	require.NoError(t, b2.srv.Stop())
	b3 := start(t, b.dir)
	_, _, ok = b3.srv.TrustBundle()
	require.False(t, ok)
}

// The way gateways push: a stream over the node's outbound tunnel, which
// carries the gateway's TLS identity. A follower takes its own copy
// (nothing is forwarded or replicated).
func TestTrustPushOverTunnelToFollower(t *testing.T) {
	t.Parallel()
	leader := setup(t, selfHosted(t, "n1"))
	cfg := Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", Logger: leader.srv.cfg.Logger}
	selfHosted(t, "n2")(&cfg)
	srv, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Stop() })
	follower := newBundle(t, srv, cfg.DataDir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, follower.srv.JoinCluster(ctx, []string{leader.srv.Addr()}))
	eventually(t, 30*time.Second, func() bool { return follower.srv.Status().LeaderID == "n1" }, "n2 follows n1")
	require.False(t, follower.srv.IsLeader())

	r := overTunnel(t, follower).call("POST", trustPath, trustBundle(9))
	require.Equal(t, 204, r.Status, string(r.Raw))
	_, at, _ := follower.srv.TrustBundle()
	requireBundle(t, follower.srv, 9, at)
	_, _, ok := leader.srv.TrustBundle()
	require.False(t, ok, "each node keeps its own copy: the leader was pushed nothing")

	// The leader over a tunnel of its own: its copy, not the follower's.
	r = overTunnel(t, leader).call("POST", trustPath, trustBundle(10))
	require.Equal(t, 204, r.Status, string(r.Raw))
	_, at10, _ := leader.srv.TrustBundle()
	requireBundle(t, leader.srv, 10, at10)
	requireBundle(t, follower.srv, 9, at)
}
