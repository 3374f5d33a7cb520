package shard

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

func TestNoLeaderIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", TLS: nodeCreds(t, "n1")} // not bootstrapped: never elects
	srv, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Stop() })
	b := newBundle(t, srv, "")

	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"})
	require.Equal(t, 503, r.Status, string(r.Raw))
	require.Equal(t, "no_leader", errCode(r))
	require.Equal(t, "1", r.Header.Get("Retry-After"))
	r = b.call("GET", "/readyz", nil)
	require.Equal(t, 503, r.Status)
}

// A node admits callers by the certificate they present: the TLS
// handshake refuses one without a certificate, one from another CA and a
// node of another shard; routes refuse roles not theirs (control may read
// usage alone: usage_http_test.go).
func TestShardAPIAdmitsByCertificate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	enqueue := func(c *http.Client) (int, error) {
		req, err := http.NewRequest("POST", b.url+"/api/v1/enqueue", strings.NewReader(`{"queue":"q"}`))
		require.NoError(t, err)
		req.Header.Set(wire.ShardNamespaceHeader, testNS)
		res, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	other := pkitest.New(t) // another deployment's CA
	refused := map[string]*http.Client{
		"no certificate": {Transport: &http.Transport{TLSClientConfig: testCA(t).Anonymous(t)}},
		"another CA":     other.HTTPClient(t, pkitest.Gateway, nil), /* refused: nothing to close */
		"another shard":  client(t, pkitest.Shard("s2", "n1"), nil),
		"plain HTTP":     http.DefaultClient,
	}
	for name, c := range refused {
		if name == "plain HTTP" {
			req, _ := http.NewRequest("POST", "http://"+b.srv.Addr()+"/api/v1/enqueue", strings.NewReader(`{"queue":"q"}`))
			res, err := c.Do(req)
			if err == nil {
				res.Body.Close()
				require.Equal(t, 400, res.StatusCode, "plain HTTP to a TLS port is refused")
			}
			continue
		}
		_, err := enqueue(c)
		require.Error(t, err, name)
	}
	// Admitted at the handshake, refused by the route.
	for _, id := range []pki.Identity{pkitest.Metrics, pkitest.Control} {
		status, err := enqueue(client(t, id, nil))
		require.NoError(t, err)
		require.Equal(t, 403, status, "%s may not enqueue", id)
	}
	for _, id := range []pki.Identity{pkitest.Gateway, pkitest.Operator, pkitest.Shard("s1", "n2")} {
		status, err := enqueue(client(t, id, nil))
		require.NoError(t, err)
		require.Equal(t, 201, status, id.String())
	}
	// The server's certificate is checked too: a gateway expecting shard
	// s2 does not talk to this node.
	_, err := enqueue(client(t, pkitest.Gateway, pki.ShardMember("s2")))
	require.ErrorContains(t, err, "s1")

	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
	require.Equal(t, wire.ShardNamespaceHeader, errField(r))
	require.Equal(t, 200, b.as(pkitest.Metrics).call("GET", "/healthz", nil).Status)
	require.Equal(t, 200, b.call("GET", "/readyz", nil).Status)
}

func TestConfigNeedsTheShardsCertificate(t *testing.T) {
	t.Parallel()
	_, err := New(Config{DataDir: t.TempDir()})
	require.ErrorContains(t, err, "TLS is required")
	_, err = New(Config{DataDir: t.TempDir(), ShardID: "s2", TLS: nodeCreds(t, "n1")})
	require.ErrorContains(t, err, "not of a node of shard s2")
	_, err = New(Config{DataDir: t.TempDir(), TLS: testCA(t).Creds(t, pkitest.Gateway)})
	require.ErrorContains(t, err, "not of a node of shard s1")
}
