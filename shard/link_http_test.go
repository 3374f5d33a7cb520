package shard

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/shardlink"
	"github.com/jobbie/jobbie/wire"
)

// openLink opens a link to b's node over mutual TLS as id.
func openLink(t *testing.T, b *bundle, id pki.Identity) (*shardlink.Conn, error) {
	t.Helper()
	raw, err := net.Dial("tcp", b.srv.Addr())
	require.NoError(t, err)
	tc := tls.Client(raw, testCA(t).Creds(t, id).Client(pki.ShardMember("s1")))
	require.NoError(t, tc.Handshake())
	c, err := shardlink.Open(tc, "localhost", time.Now().Add(5*time.Second), shardlink.Options{WriteTimeout: 5 * time.Second})
	if err == nil {
		t.Cleanup(c.Close)
	}
	return c, err
}

func linkDo(t *testing.T, c *shardlink.Conn, method, path, body string, deadline time.Duration) (*fasthttp.Response, error) {
	t.Helper()
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetHost("localhost")
	req.Header.Set(wire.ShardNamespaceHeader, testNS)
	if body != "" {
		req.Header.SetContentType("application/json")
		req.SetBodyString(body)
	}
	resp := new(fasthttp.Response)
	return resp, c.Do(req, resp, time.Now().Add(deadline), 1<<20)
}

// A link is opened by whom /api/v1 admits, and each of its requests is
// judged as its TLS peer: never as the local gateway of the node's Unix
// socket, which is taken when a connection has no TLS state.
func TestALinkCarriesItsPeersIdentity(t *testing.T) {
	t.Parallel()
	b := setup(t)

	_, err := openLink(t, b, pkitest.Metrics)
	var refused *shardlink.UpgradeError
	require.ErrorAs(t, err, &refused, "a scraper may not open a link")
	require.Equal(t, fasthttp.StatusForbidden, refused.Status)

	gw := pki.Identity{Role: pki.RoleGateway, Node: "g1"}
	link, err := openLink(t, b, gw)
	require.NoError(t, err)
	r, err := linkDo(t, link, fasthttp.MethodPost, "/api/v1/enqueue", `{"queue":"q"}`, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, r.StatusCode(), string(r.Body()))
	// The members' route refuses a gateway, and names the one it saw.
	r, err = linkDo(t, link, fasthttp.MethodGet, "/internal/v1/status", "", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusForbidden, r.StatusCode())
	require.Contains(t, string(r.Body()), gw.String())
	require.NotContains(t, string(r.Body()), "local")
	// A link cannot be opened inside a link.
	r, err = linkDo(t, link, fasthttp.MethodGet, shardlink.Path, "", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusBadRequest, r.StatusCode())

	ops, err := openLink(t, b, pkitest.Operator)
	require.NoError(t, err)
	r, err = linkDo(t, ops, fasthttp.MethodGet, "/internal/v1/status", "", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusOK, r.StatusCode(), string(r.Body()))
}

// A fetch parked on a link whose caller gave up (its deadline passed: a
// cancel frame) leases nothing: the job enqueued after goes to a live
// worker, and nothing is ever leased to the one that left.
func TestACancelledFetchOnALinkLeasesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	link, err := openLink(t, b, pkitest.Gateway)
	require.NoError(t, err)
	ghost := make(chan error, 1)
	go func() {
		_, err := linkDo(t, link, fasthttp.MethodPost, "/api/v1/fetch", `{"queues":["q"],"worker_id":"ghost","timeout":30}`, 2*time.Second)
		ghost <- err
	}()
	eventually(t, 5*time.Second, func() bool { return b.srv.waiters.Parked(testNS, "q") == 1 }, "the ghost parks")
	require.ErrorIs(t, <-ghost, fasthttp.ErrTimeout)
	live := liveFetch(b, "/api/v1/fetch")
	eventually(t, 5*time.Second, func() bool { return b.srv.waiters.Parked(testNS, "q") == 2 }, "the live worker parks behind it")
	id := b.enqueue(map[string]any{"queue": "q"})
	got := <-live
	require.Equal(t, 200, got.Status, string(got.Raw))
	require.Contains(t, string(got.Raw), id)
	d := b.job(id)
	require.Equal(t, "live", d["worker"].(map[string]any)["id"])
	require.NotContains(t, string(mustJSON(d["timeline"])), "ghost")
}
