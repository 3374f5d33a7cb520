package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The gateway sends no secret: control and shards know it by its
// certificate, and it talks only to the control node and the shard
// members whose certificates say so, whatever address it was given.
func TestGatewayChecksWhomItReaches(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	impostor := newFakeShard(t, b.ca, "s2", "n1")
	b.control.Place(tenantA, "emails", "s1", impostor.addr()) // a lie: s2's node at s1's placement
	b.start(t, func(c *Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.LeaderRetryTimeout = 300 * time.Millisecond
	})
	b.waitReady(t)
	key := b.key(t, tenancy.RoleOwner, "*")

	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, map[string]any{"queue": "q"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	seen := b.shard.last(t)
	require.Empty(t, seen.Header.Get("Authorization"), "no secret travels to the shard")
	require.Equal(t, pkitest.Gateway, seen.Peer, "the shard knows the gateway by its certificate")

	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, map[string]any{"queue": "q"}, "X-Jobbie-Namespace", "emails")
	require.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
	require.Zero(t, impostor.count(), "a node of another shard never gets the request")

	// Metrics are not on the public port; on the metrics port they are for
	// scrapers' certificates.
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/metrics", key, nil).status)
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/metrics", "", nil).status)
	scrape := func(id pki.Identity) (int, error) {
		c := b.ca.HTTPClient(t, id, pki.Roles(pki.RoleGateway))
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + b.gw.MetricsAddr() + "/metrics")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	for _, id := range []pki.Identity{pkitest.Metrics, pkitest.Operator} {
		code, err := scrape(id)
		require.NoError(t, err, "%s scrapes", id)
		require.Equal(t, http.StatusOK, code)
	}
	for _, id := range []pki.Identity{pkitest.Shard("s1", "n1"), pkitest.Control, pkitest.Gateway} {
		_, err := scrape(id)
		require.Error(t, err, "%s does not scrape", id)
	}
}

// Without MetricsAddr the gateway serves no metrics at all.
func TestNoMetricsWithoutMetricsAddr(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Empty(t, b.gw.MetricsAddr())
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/metrics", "", nil).status)
}

// A gateway pointed at something that is not control (a shard's
// certificate at control's address) never loads keys from it.
func TestGatewayRefusesAControlImpostor(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	var asked atomic.Int64
	impostor := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked.Add(1) }))
	serveTLS(t, impostor, ca, pkitest.Shard("s1", "n1"))
	b := &bundle{ca: ca, http: &http.Client{Timeout: 30 * time.Second}}
	b.start(t, func(c *Config) { c.ControlURL, c.control = impostor.URL, nil })
	select {
	case <-b.gw.Ready():
		t.Fatal("the gateway took keys from an impostor")
	case <-time.After(500 * time.Millisecond):
	}
	require.Equal(t, http.StatusServiceUnavailable, b.do(t, http.MethodGet, "/readyz", "", nil).status)
	require.Zero(t, asked.Load(), "the impostor never served the keys: it was never sent a request")
}

// A shard on the gateway's own host may be reached on a Unix socket: no
// TLS there, and no credentials either, since the socket's permissions
// are what guard it.
func TestUnixSocketShardGetsNoCredentials(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	local, addr := newUnixFakeShard(t)
	b.control.AddNamespace(tenantA, "local", "s-local", addr)
	b.start(t)
	b.waitReady(t)

	r := b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleProducer, "local"), enqueueBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	seen := local.last(t)
	require.Empty(t, seen.Header.Get("Authorization"))
	require.Zero(t, seen.Peer)
	require.Equal(t, tenancy.ShardNamespace(tenantA, "local"), seen.Header.Get(wire.ShardNamespaceHeader))
	require.Zero(t, b.shard.count())
}

func TestTLSConfigRules(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	gw := ca.Creds(t, pkitest.Gateway)
	base := Config{ControlURL: "https://127.0.0.1:1"}.WithDefaults()
	c := base
	require.ErrorContains(t, c.Validate(), "gateway: TLS is required")
	c.TLS = ca.Creds(t, pkitest.Shard("s1", "n1"))
	require.ErrorContains(t, c.Validate(), "not of a gateway")
	c.TLS = gw
	require.NoError(t, c.Validate())
	c.ControlURL = "http://127.0.0.1:1"
	require.ErrorContains(t, c.Validate(), "must be an https URL", "control is never reached in the clear")
}
