package e2e

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
)

// Every process serves /metrics to the operator's and scrapers'
// certificates and to nobody else: metrics carry namespace labels. A
// gateway serves them only on its --metrics-addr, never on its public port.
func TestMetricsAreForTheOperatorOnly(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	p := sharedPKI()
	scraper := p.client(t, "metrics", "", "prometheus")
	for _, hc := range []*http.Client{shared.ops, scraper} {
		for _, base := range []string{shared.metrics, shared.control, shared.shard} {
			r := callVia(t, hc, "GET", base+"/metrics", "", nil)
			require.Equal(t, 200, r.Status, base)
			require.Contains(t, string(r.Raw), `jobbie_raft_leader{group="shard s1"} 1`)
			require.Contains(t, string(r.Raw), `jobbie_raft_leader{group="control"} 1`)
			require.Contains(t, string(r.Raw), "jobbie_raft_apply_seconds_bucket")
		}
	}

	// The public port has none, whatever key is sent.
	for _, key := range []string{"", ct.OwnerKey, shared.operatorKey} {
		r := call(t, "GET", shared.gateway+"/metrics", key, nil)
		require.NotEqual(t, 200, r.Status, string(r.Raw))
		require.NotContains(t, string(r.Raw), "jobbie_raft_leader")
	}

	// No certificate: the shard node and the gateway's metrics port refuse
	// at the handshake; control, which serves clients without one,
	// answers 401 whatever key is sent.
	caOnly, err := devproc.ClientTLS("", "", p.caFile())
	require.NoError(t, err)
	anon := tlsClient(t, caOnly, 10*time.Second)
	for _, base := range []string{shared.metrics, shared.shard} {
		refusedAtHandshake(t, anon, base+"/metrics")
	}
	for _, key := range []string{"", ct.OwnerKey, shared.operatorKey} {
		require.Equal(t, 401, callVia(t, anon, "GET", shared.control+"/metrics", key, nil).Status)
	}

	// A certificate of a role that may not scrape: the gateway's metrics
	// port refuses it at the handshake, the others answer 403.
	gateway := p.client(t, "gateway", "", "not-a-scraper")
	refusedAtHandshake(t, gateway, shared.metrics+"/metrics")
	for _, base := range []string{shared.control, shared.shard} {
		r := callVia(t, gateway, "GET", base+"/metrics", "", nil)
		require.Equal(t, 403, r.Status, "%s: %s", base, r.Raw)
		require.NotContains(t, string(r.Raw), "jobbie_raft_leader")
	}

	// A scraper's certificate from another CA is refused everywhere.
	stranger := newTestPKI(t).tlsConfig(t, "metrics", "", "prometheus")
	stranger.RootCAs = caOnly.RootCAs
	// Sent even though the server names another CA (Go's client would
	// otherwise send none).
	cert := stranger.Certificates[0]
	stranger.Certificates = nil
	stranger.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	other := tlsClient(t, stranger, 10*time.Second)
	for _, base := range []string{shared.metrics, shared.control, shared.shard} {
		refusedAtHandshake(t, other, base+"/metrics")
	}
}

// refusedAtHandshake checks that a GET of url through hc gets no HTTP
// answer: the server refused the client's certificate (or its lack of one).
func refusedAtHandshake(t *testing.T, hc *http.Client, url string) {
	t.Helper()
	res, err := hc.Get(url)
	if err == nil {
		res.Body.Close()
		t.Fatalf("GET %s answered %d; want the TLS handshake refused", url, res.StatusCode)
	}
	// The server's alert, not this client giving up on the server.
	require.Contains(t, err.Error(), "remote error: tls:", "GET %s", url)
}
