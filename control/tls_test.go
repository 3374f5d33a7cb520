package control

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
)

// tlsBundle is a control node with TLS and a client per identity.
type tlsBundle struct {
	*bundle
	ca *pki.CA
}

func issue(t *testing.T, ca *pki.CA, id pki.Identity) *pki.Credentials {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(id, nil, time.Hour)
	require.NoError(t, err)
	c, err := pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	return c
}

func setupTLS(t *testing.T) *tlsBundle {
	t.Helper()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	b := setup(t, func(c *Config) {
		c.ClusterSecret = ""
		c.TLS = issue(t, ca, pki.Identity{Role: pki.RoleControl, Node: "control1"})
	})
	b.base = "https://" + b.srv.Addr()
	return &tlsBundle{bundle: b, ca: ca}
}

// as switches the bundle's client to id's certificate (nil: none, only
// the CA trusted).
func (b *tlsBundle) as(t *testing.T, id *pki.Identity) *tlsBundle {
	t.Helper()
	var tr *http.Transport
	if id == nil {
		anon := issue(t, b.ca, pki.Identity{Role: pki.RoleOperator, Node: "anon"})
		cfg := anon.Client(pki.Roles(pki.RoleControl))
		cfg.GetClientCertificate = nil // trusts the CA but presents nothing
		tr = &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}
	} else {
		tr = &http.Transport{TLSClientConfig: issue(t, b.ca, *id).Client(pki.Roles(pki.RoleControl)), DisableKeepAlives: true}
	}
	c := *b.bundle
	c.client = &http.Client{Timeout: 10 * time.Second, Transport: tr}
	return &tlsBundle{bundle: &c, ca: b.ca}
}

var (
	asGateway  = &pki.Identity{Role: pki.RoleGateway, Node: "g1"}
	asShard1   = &pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"}
	asOperator = &pki.Identity{Role: pki.RoleOperator, Node: "ops"}
)

// With TLS, each internal route admits its callers by the roles their
// certificates show, and the cluster secret opens nothing.
func TestTLSInternalRoutesCheckTheCallersRole(t *testing.T) {
	t.Parallel()
	b := setupTLS(t)
	acme := b.newTenant(t, "acme")
	keys := "/internal/v1/tenants/" + acme.Tenant.ID + "/keys"

	r := b.as(t, asGateway).do(t, http.MethodPost, keys, "", map[string]any{"name": "ci", "role": "owner", "namespaces": []string{"*"}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	for _, who := range []*pki.Identity{asShard1, asOperator} {
		requireError(t, b.as(t, who).do(t, http.MethodPost, keys, "", map[string]string{"name": "x", "role": "owner"}), 403, "forbidden")
		requireError(t, b.as(t, who).do(t, http.MethodGet, "/internal/v1/revocations", "", nil), 403, "forbidden")
	}
	requireError(t, b.as(t, nil).do(t, http.MethodGet, "/internal/v1/revocations", testSecret, nil), 401, "unauthenticated")
	require.Equal(t, http.StatusOK, b.as(t, asGateway).do(t, http.MethodGet, "/internal/v1/revocations", "", nil).status)

	// The operator API still takes operator keys, no certificate needed.
	r = b.as(t, nil).do(t, http.MethodGet, "/control/v1/tenants", b.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)

	// Metrics are for scrapers' and operators' certificates.
	require.Equal(t, http.StatusOK, b.as(t, asOperator).do(t, http.MethodGet, "/metrics", "", nil).status)
	require.Equal(t, http.StatusOK, b.as(t, &pki.Identity{Role: pki.RoleMetrics, Node: "prometheus"}).do(t, http.MethodGet, "/metrics", "", nil).status)
	requireError(t, b.as(t, asGateway).do(t, http.MethodGet, "/metrics", "", nil), 403, "forbidden")
}

// A shard registers its own shard only.
func TestTLSShardRegistersItsOwnShardOnly(t *testing.T) {
	t.Parallel()
	b := setupTLS(t)
	reg := func(shard string) map[string]any {
		return map[string]any{"shard_id": shard, "members": []map[string]string{{"node_id": "n1", "http_addr": "10.0.0.7:8082", "raft_addr": "10.0.0.7:7002"}}}
	}
	r := b.as(t, asShard1).do(t, http.MethodPost, "/control/v1/shards/register", "", reg("s1"))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	requireError(t, b.as(t, asShard1).do(t, http.MethodPost, "/control/v1/shards/register", "", reg("s2")), 403, "forbidden")
	requireError(t, b.as(t, asGateway).do(t, http.MethodPost, "/control/v1/shards/register", "", reg("s1")), 403, "forbidden")
}

func TestTLSConfigRules(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	ctl := issue(t, ca, pki.Identity{Role: pki.RoleControl, Node: "control1"})
	require.ErrorContains(t, Config{DataDir: "/tmp/x", TLS: ctl, ClusterSecret: testSecret}.WithDefaults().Validate(), "ClusterSecret must be empty")
	gw := issue(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
	require.ErrorContains(t, Config{DataDir: "/tmp/x", TLS: gw}.WithDefaults().Validate(), "not of a control node")
	require.NoError(t, Config{DataDir: "/tmp/x", TLS: ctl}.WithDefaults().Validate())
}
