package control

import (
	"crypto/tls"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// Each internal route admits its callers by the roles their certificates
// show; no bearer token stands in for a certificate.
func TestTLSInternalRoutesCheckTheCallersRole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acme := b.newTenant(t, "acme")
	keys := "/internal/v1/tenants/" + acme.Tenant.ID + "/keys"
	gw := b.as(t, pkitest.Gateway)

	r := gw.do(t, http.MethodPost, keys, "", map[string]any{"name": "ci", "role": "owner", "namespaces": []string{"*"}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	for _, who := range []pki.Identity{pkitest.Shard("s1", "n1"), pkitest.Operator} {
		requireError(t, b.as(t, who).do(t, http.MethodPost, keys, "", map[string]string{"name": "x", "role": "owner"}), 403, "forbidden")
		requireError(t, b.as(t, who).do(t, http.MethodGet, "/internal/v1/revocations", "", nil), 403, "forbidden")
	}
	requireError(t, b.do(t, http.MethodGet, "/internal/v1/revocations", b.op, nil), 401, "unauthenticated")
	require.Equal(t, http.StatusOK, gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil).status)

	// The operator API takes operator keys, no certificate needed.
	r = b.do(t, http.MethodGet, "/control/v1/tenants", b.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)

	// Metrics are for scrapers' and operators' certificates.
	require.Equal(t, http.StatusOK, b.as(t, pkitest.Operator).do(t, http.MethodGet, "/metrics", "", nil).status)
	require.Equal(t, http.StatusOK, b.as(t, pkitest.Metrics).do(t, http.MethodGet, "/metrics", "", nil).status)
	requireError(t, gw.do(t, http.MethodGet, "/metrics", "", nil), 403, "forbidden")
	requireError(t, b.do(t, http.MethodGet, "/metrics", b.op, nil), 401, "unauthenticated")
}

// A certificate from another CA does not get through the handshake, even
// for a public route.
func TestTLSRefusesCertificatesFromAnotherCA(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := pkitest.New(t)
	c := clientWith(other.Creds(t, pkitest.Gateway).Client(nil))
	for _, path := range []string{"/internal/v1/revocations", "/healthz"} {
		resp, err := c.Get(b.base + path)
		if err == nil {
			resp.Body.Close()
		}
		require.Error(t, err, path)
	}
	// And a client that trusts another CA does not take this server.
	_, err := clientWith(other.Anonymous(t)).Get(b.base + "/healthz")
	require.Error(t, err)
}

// A shard registers its own shard only.
func TestTLSShardRegistersItsOwnShardOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := func(shard string) map[string]any {
		return map[string]any{"shard_id": shard, "members": []map[string]string{{"node_id": "n1", "http_addr": "10.0.0.7:8082", "raft_addr": "10.0.0.7:7002"}}}
	}
	s1 := b.as(t, pkitest.Shard("s1", "n1"))
	r := s1.do(t, http.MethodPost, registerPath, "", reg("s1"))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	requireError(t, s1.do(t, http.MethodPost, registerPath, "", reg("s2")), 403, "forbidden")
	requireError(t, b.as(t, pkitest.Gateway).do(t, http.MethodPost, registerPath, "", reg("s1")), 403, "forbidden")
	_, ok := shardList(t, b)["s1"]
	require.True(t, ok)
	require.Empty(t, shardList(t, b)["s2"].Members, "s1's certificate registered nothing for s2")
}

// Raft takes connections from control nodes only.
func TestTLSRaftAdmitsControlNodesOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// dial connects and reads: a member's connection stays open for Raft's
	// first message (the read times out), anyone else's is refused.
	dial := func(cfg *tls.Config) error {
		conn, err := tls.Dial("tcp", b.srv.RaftAddr(), cfg)
		if err != nil {
			return err
		}
		defer conn.Close()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
		_, err = conn.Read(make([]byte, 1))
		return err
	}
	expect := pki.Roles(pki.RoleControl)
	require.ErrorIs(t, dial(b.ca.Creds(t, pki.Identity{Role: pki.RoleControl, Node: "control2"}).Client(expect)), os.ErrDeadlineExceeded)
	for _, id := range []pki.Identity{pkitest.Gateway, pkitest.Operator, pkitest.Shard("s1", "n1")} {
		err := dial(b.ca.Creds(t, id).Client(expect))
		require.Error(t, err, "%s", id)
		require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "%s", id)
	}
	err := dial(b.ca.Anonymous(t))
	require.Error(t, err)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded)
}

// TLS is required, and must be a control node's certificate.
func TestTLSConfigRules(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	err := Config{DataDir: "/tmp/x"}.WithDefaults().Validate()
	require.ErrorContains(t, err, "control: TLS is required: ")
	_, err = New(Config{DataDir: t.TempDir()})
	require.ErrorContains(t, err, "control: TLS is required: ")
	for _, id := range []pki.Identity{pkitest.Gateway, pkitest.Operator, pkitest.Shard("s1", "n1")} {
		require.ErrorContains(t, Config{DataDir: "/tmp/x", TLS: ca.Creds(t, id)}.WithDefaults().Validate(), "not of a control node")
	}
	require.NoError(t, Config{DataDir: "/tmp/x", TLS: ca.Creds(t, pkitest.Control)}.WithDefaults().Validate())
}
