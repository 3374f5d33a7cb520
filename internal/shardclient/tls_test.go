package shardclient

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
)

func creds(t *testing.T, ca *pki.CA, id pki.Identity) *pki.Credentials {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(id, nil, time.Hour)
	require.NoError(t, err)
	c, err := pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	return c
}

// serveTLS is a shard node on loopback that admits gateways only and
// answers with the identity it saw.
func serveTLS(t *testing.T, c *pki.Credentials) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeNode{addr: ln.Addr().String()}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if noLink(ctx) {
			return
		}
		f.hits.Add(1)
		id, ok := pki.PeerIdentity(ctx.TLSConnectionState())
		if !ok {
			ctx.SetStatusCode(fasthttp.StatusUnauthorized)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
		ctx.SetBodyString(id.String())
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(tls.NewListener(ln, c.Server(pki.Roles(pki.RoleGateway)))); close(done) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return f
}

// With TLS, a route reaches only nodes whose certificates name its shard,
// and sends no shared secret.
func TestTLSRoutesCheckWhomTheyReach(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	s1 := serveTLS(t, creds(t, ca, pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"}))
	s2 := serveTLS(t, creds(t, ca, pki.Identity{Role: pki.RoleShard, Shard: "s2", Node: "n1"}))
	gw := creds(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
	c := New(Config{TLS: gw, RetryTimeout: time.Second})
	t.Cleanup(c.Close)

	rt, err := c.Route("s1", s1.addr, nil)
	require.NoError(t, err)
	resp, err := call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.Equal(t, "jobbie://gateway/-/g1", string(resp.Body()), "the node saw the gateway's identity")

	// Gossip (or a stale placement) says s1 lives at s2's address: the
	// handshake fails, nothing is sent, and the failure says so.
	_, err = c.Route("s1", s2.addr, nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	var f *Failure
	require.ErrorAs(t, err, &f)
	require.False(t, f.Sent, "a refused handshake carried no request: %v", f.Err)
	require.Zero(t, s2.hits.Load(), "s2's node never got the request")

	// A client without credentials is refused by the node.
	plain := New(Config{RetryTimeout: 200 * time.Millisecond})
	t.Cleanup(plain.Close)
	rt3, err := plain.Route("s1", "https://"+s1.addr, nil)
	require.NoError(t, err)
	_, err = call(t, plain, rt3, fasthttp.MethodPost)
	require.Error(t, err)
	require.EqualValues(t, 1, s1.hits.Load())
}

// With ShardOwner, a route's nodes must also name the shard's owner:
// a hosted shard's node certified for a tenant, or a self-hosted one
// certified for another tenant or for none, is refused before any
// request.
func TestTLSRoutesCheckTheShardsOwner(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	const acme, other = "t_0123456789abcdefghijklmnop", "t_zzzzzzzzzzzzzzzzzzzzzzzzzz"
	owned := serveTLS(t, creds(t, ca, pki.Identity{Role: pki.RoleShard, Shard: "acme-1", Node: "n1", Tenant: acme}))
	hosted := serveTLS(t, creds(t, ca, pki.Identity{Role: pki.RoleShard, Shard: "acme-1", Node: "n2"}))
	gw := creds(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
	var owner atomic.Value
	owner.Store(acme)
	c := New(Config{TLS: gw, RetryTimeout: 200 * time.Millisecond,
		ShardOwner: func(shard string) string {
			if shard == "acme-1" {
				return owner.Load().(string)
			}
			return ""
		}})
	t.Cleanup(c.Close)

	rt, err := c.Route("acme-1", owned.addr, nil)
	require.NoError(t, err)
	resp, err := call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())

	// A node of the shard that names no owner.
	rtHosted, err := c.Route("acme-1", hosted.addr, nil)
	require.NoError(t, err)
	_, err = call(t, c, rtHosted, fasthttp.MethodPost)
	var f *Failure
	require.ErrorAs(t, err, &f)
	require.False(t, f.Sent)
	require.ErrorContains(t, err, "does not belong to tenant "+acme)
	require.Zero(t, hosted.hits.Load())

	// The owner changes (as placement would say): new handshakes refuse
	// the old owner's node.
	owner.Store(other)
	c.nodes.closeIdle()
	rt, err = c.Route("acme-1", owned.addr, nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.ErrorAs(t, err, &f)
	require.False(t, f.Sent)
	require.EqualValues(t, 1, owned.hits.Load())
}
