package gateway

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/tenancy"
)

func issue(t testing.TB, ca *pki.CA, id pki.Identity) *pki.Credentials {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(id, nil, time.Hour)
	require.NoError(t, err)
	c, err := pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	return c
}

// serveTLS starts srv over TLS as id, admitting gateways. (StartTLS would
// put httptest's own certificate first.)
func serveTLS(t testing.TB, srv *httptest.Server, ca *pki.CA, id pki.Identity) {
	srv.Listener = tls.NewListener(srv.Listener, issue(t, ca, id).Server(pki.Roles(pki.RoleGateway)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.Start()
	srv.URL = "https://" + srv.Listener.Addr().String()
}

// With TLS the gateway sends no secret: control and shards know it by its
// certificate, and it talks only to the control node and the shard
// members whose certificates say so, whatever address it was given.
func TestTLSGatewayChecksWhomItReaches(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	s := newSigner(t, "sig-1")
	control := newFakeControl(t, "", s) // builds the handlers; served again over TLS below
	control.srv.Close()
	tlsControl := httptest.NewUnstartedServer(control.srv.Config.Handler)
	serveTLS(t, tlsControl, ca, pki.Identity{Role: pki.RoleControl, Node: "control1"})
	t.Cleanup(tlsControl.Close)

	shard := newFakeShard(t)
	shard.srv.Close()
	s1 := httptest.NewUnstartedServer(shard.srv.Config.Handler)
	serveTLS(t, s1, ca, pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"})
	t.Cleanup(s1.Close)
	impostor := newFakeShard(t)
	impostor.srv.Close()
	s2 := httptest.NewUnstartedServer(impostor.srv.Config.Handler)
	serveTLS(t, s2, ca, pki.Identity{Role: pki.RoleShard, Shard: "s2", Node: "n1"})
	t.Cleanup(s2.Close)
	control.place(tenantA, "default", "s1", s1.Listener.Addr().String())
	control.place(tenantA, "emails", "s1", s2.Listener.Addr().String()) // a lie: s2's node at s1's placement

	b := &bundle{signer: s, control: control, shard: shard, http: &http.Client{Timeout: 30 * time.Second}}
	b.start(t, func(c *Config) {
		c.ControlURL, c.ClusterSecret = tlsControl.URL, ""
		c.TLS = issue(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
		c.MetricsAddr = "127.0.0.1:0"
		c.LeaderRetryTimeout = 300 * time.Millisecond
	})
	b.waitReady(t)
	key := b.key(t, tenancy.RoleOwner, "*")

	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, map[string]any{"queue": "q"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	seen := shard.last(t)
	require.Empty(t, seen.Header.Get("Authorization"), "no secret travels to the shard")

	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, map[string]any{"queue": "q"}, "X-Jobbie-Namespace", "emails")
	require.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
	require.Zero(t, impostor.count(), "a node of another shard never gets the request")

	// Metrics are not on the public port; on the metrics port they are for
	// scrapers' certificates.
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/metrics", key, nil).status)
	scrape := func(id pki.Identity) (int, error) {
		tr := &http.Transport{TLSClientConfig: issue(t, ca, id).Client(pki.Roles(pki.RoleGateway))}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + b.gw.MetricsAddr() + "/metrics")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	code, err := scrape(pki.Identity{Role: pki.RoleMetrics, Node: "prometheus"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	_, err = scrape(pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"})
	require.Error(t, err, "a shard's certificate does not scrape")
}

// A gateway pointed at something that is not control (a shard's
// certificate at control's address) never loads keys from it.
func TestTLSGatewayRefusesAControlImpostor(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	s := newSigner(t, "sig-1")
	control := newFakeControl(t, "", s)
	control.srv.Close()
	fake := httptest.NewUnstartedServer(control.srv.Config.Handler)
	serveTLS(t, fake, ca, pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"})
	t.Cleanup(fake.Close)
	b := &bundle{signer: s, control: control, http: &http.Client{Timeout: 30 * time.Second}}
	b.start(t, func(c *Config) {
		c.ControlURL, c.ClusterSecret = fake.URL, ""
		c.TLS = issue(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
	})
	select {
	case <-b.gw.Ready():
		t.Fatal("the gateway took keys from an impostor")
	case <-time.After(500 * time.Millisecond):
	}
	require.Equal(t, http.StatusServiceUnavailable, b.do(t, http.MethodGet, "/readyz", "", nil).status)
	require.Zero(t, control.jwksN.Load(), "the impostor never served the keys")
}

func TestTLSConfigRules(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	gw := issue(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
	base := Config{ControlURL: "https://127.0.0.1:1"}.WithDefaults()
	c := base
	c.TLS, c.ClusterSecret = gw, testSecret
	require.ErrorContains(t, c.Validate(), "ClusterSecret must be empty")
	c = base
	c.TLS = issue(t, ca, pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"})
	require.ErrorContains(t, c.Validate(), "not of a gateway")
	c = base
	c.TLS = gw
	require.NoError(t, c.Validate())
}
