package control

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// selfHosted is a bundle whose control signs self-hosted shards with a
// CA of their own, and tells joined nodes a tunnel address.
func selfHosted(t *testing.T) (*bundle, *pki.CA) {
	t.Helper()
	ca, err := pki.NewCA("jobbie self-hosted shards")
	require.NoError(t, err)
	b := setup(t, func(c *Config) {
		c.SelfHostedCA = ca
		c.TunnelURLs = []string{"127.0.0.1:7443"}
	})
	return b, ca
}

func csrFor(t *testing.T, id pki.Identity) string {
	t.Helper()
	csr, _, err := pki.NewCSR(id, nil)
	require.NoError(t, err)
	return string(csr)
}

func TestJoinTokenJoinPlaceRevoke(t *testing.T) {
	b, shCA := selfHosted(t)
	gw := b.as(t, pkitest.Gateway)
	a, other := b.newTenant(t, "acme"), b.newTenant(t, "globex")
	base := "/internal/v1/tenants/" + a.Tenant.ID

	// Mint: bad fields are 400s naming them, and create nothing.
	requireError(t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": ""}), 400, "bad_request", "name")
	requireError(t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc1", "expires_in": "30s"}), 400, "bad_request", "expires_in")
	requireError(t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc1", "expires_in": "25h"}), 400, "bad_request", "expires_in")
	requireError(t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc1", "nodes": 6}), 400, "bad_request", "nodes")
	list := decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil))
	require.Empty(t, list.Shards)

	r := gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc1", "expires_in": "10m"})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	tok := decodeAs[wire.JoinToken](t, r)
	require.NotEmpty(t, tok.Token)
	require.Regexp(t, `^sh_`, tok.ShardID)
	require.Equal(t, 1, tok.Nodes)

	// A shard's own certificate (the deployment's CA) may not mint.
	sh := b.as(t, pkitest.Shard("s1", "n1"))
	requireError(t, sh.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "x"}), 403, "forbidden")

	// The other tenant sees none of it, and cannot place on it.
	obase := "/internal/v1/tenants/" + other.Tenant.ID
	require.Empty(t, decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", obase+"/shards", "", nil)).Shards)
	requireError(t, gw.do(t, "POST", obase+"/namespaces", "", map[string]any{"name": "steal", "shard": tok.ShardID}), 404, "not_found")
	requireError(t, gw.do(t, "DELETE", obase+"/shards/"+tok.ShardID, "", nil), 404, "not_found")

	// Join, with no client certificate. A bad request spends nothing.
	id := pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: "n1", Tenant: a.Tenant.ID}
	wrong := pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"}
	requireError(t, b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: "n1", CSR: csrFor(t, wrong)}), 400, "bad_request", "csr")
	requireError(t, b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: "jst_nope", NodeID: "n1", CSR: csrFor(t, id)}), 401, "unauthenticated")
	r = b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: "n1", CSR: csrFor(t, id)})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	joined := decodeAs[wire.JoinResponse](t, r)
	require.Equal(t, []string{"127.0.0.1:7443"}, joined.TunnelURLs)
	require.Equal(t, string(shCA.CertPEM()), joined.CA)
	blk, _ := pem.Decode([]byte(joined.Certificate))
	cert, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	got, err := pki.IdentityOf(cert)
	require.NoError(t, err)
	require.Equal(t, id, got)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(shCA.CertPEM())
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	require.NoError(t, err)

	// Single use: the token is spent.
	id2 := id
	id2.Node = "n2"
	requireError(t, b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: "n2", CSR: csrFor(t, id2)}), 401, "unauthenticated")

	all := decodeAs[wire.SelfHostedShards](t, gw.do(t, "GET", "/internal/v1/shards/self-hosted", "", nil))
	require.Equal(t, []wire.SelfHostedShard{{ID: tok.ShardID, TenantID: a.Tenant.ID, Nodes: []string{"n1"}}}, all.Shards)
	requireError(t, sh.do(t, "GET", "/internal/v1/shards/self-hosted", "", nil), 403, "forbidden")

	list = decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil))
	require.Len(t, list.Shards, 1)
	require.Equal(t, tok.ShardID, list.Shards[0].ID)
	require.Equal(t, "dc1", list.Shards[0].Name)
	require.Equal(t, []string{"n1"}, list.Shards[0].Nodes)

	// Least-loaded placement never chooses it, whatever its load.
	for _, n := range []string{"p1", "p2", "p3"} {
		ns := decodeAs[wire.NamespacePlacement](t, gw.do(t, "POST", obase+"/namespaces", "", map[string]any{"name": n}))
		require.NotEqual(t, tok.ShardID, ns.ShardID)
	}
	// The owner places on it by name; the gateway reaches it by tunnel.
	r = gw.do(t, "POST", base+"/namespaces", "", map[string]any{"name": "onprem", "shard": tok.ShardID})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	pl := decodeAs[wire.NamespacePlacement](t, gw.do(t, "GET", base+"/namespaces/onprem", "", nil))
	require.Equal(t, tok.ShardID, pl.ShardID)
	require.Equal(t, []string{"tunnel://" + tok.ShardID + "/n1"}, pl.ShardMembers)
	requireError(t, gw.do(t, "POST", base+"/namespaces", "", map[string]any{"name": "nowhere", "shard": "sh_unknown"}), 404, "not_found")

	// Revoke: 409 while it holds a namespace, then gone.
	requireError(t, gw.do(t, "DELETE", base+"/shards/"+tok.ShardID, "", nil), 409, "conflict")
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", base+"/namespaces/onprem", "", nil).status)
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", base+"/shards/"+tok.ShardID, "", nil).status)
	require.Empty(t, decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil)).Shards)
	require.Empty(t, decodeAs[wire.SelfHostedShards](t, gw.do(t, "GET", "/internal/v1/shards/self-hosted", "", nil)).Shards)
	requireError(t, gw.do(t, "POST", base+"/namespaces", "", map[string]any{"name": "again", "shard": tok.ShardID}), 404, "not_found")
}

func TestJoinTokenForACluster(t *testing.T) {
	b, _ := selfHosted(t)
	gw := b.as(t, pkitest.Gateway)
	a := b.newTenant(t, "acme")
	base := "/internal/v1/tenants/" + a.Tenant.ID
	tok := decodeAs[wire.JoinToken](t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc", "nodes": 3}))
	join := func(node string) response {
		id := pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: node, Tenant: a.Tenant.ID}
		return b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: node, CSR: csrFor(t, id)})
	}
	require.Equal(t, http.StatusCreated, join("n1").status)
	requireError(t, join("n1"), 409, "conflict")
	require.Equal(t, http.StatusCreated, join("n2").status)
	require.Equal(t, http.StatusCreated, join("n3").status)
	requireError(t, join("n4"), 401, "unauthenticated")
	list := decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil))
	require.Equal(t, []string{"n1", "n2", "n3"}, list.Shards[0].Nodes)
}

func TestJoinWithoutSelfHostedCA(t *testing.T) {
	b := setup(t)
	requireError(t, b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: "jst_x", NodeID: "n1", CSR: "x"}), 503, "unavailable")
}

func TestJoinTokenExpires(t *testing.T) {
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ca, err := pki.NewCA("self-hosted")
	require.NoError(t, err)
	b := setup(t, func(c *Config) { c.SelfHostedCA, c.Clock = ca, clk })
	gw := b.as(t, pkitest.Gateway)
	a := b.newTenant(t, "acme")
	tok := decodeAs[wire.JoinToken](t, gw.do(t, "POST", "/internal/v1/tenants/"+a.Tenant.ID+"/shards/join-tokens", "", map[string]any{"name": "dc", "expires_in": "1m"}))
	require.Equal(t, clk.Now().Add(time.Minute), tok.ExpiresAt)
	clk.Advance(time.Minute)
	id := pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: "n1", Tenant: a.Tenant.ID}
	r := b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: "n1", CSR: csrFor(t, id)})
	requireError(t, r, 401, "unauthenticated")
	require.Contains(t, string(r.body), "expired")
}
