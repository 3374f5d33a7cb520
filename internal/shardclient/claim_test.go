package shardclient

import (
	"bytes"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// tlsNode is a real HTTPS server on loopback with creds, counting the
// connections it accepted.
type tlsNode struct {
	addr  string
	conns atomic.Int32
}

type countingListener struct {
	net.Listener
	n *tlsNode
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.conns.Add(1)
	}
	return c, err
}

func serveCounted(t *testing.T, cfg *tls.Config) *tlsNode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n := &tlsNode{addr: ln.Addr().String()}
	srv := &fasthttp.Server{Handler: ok}
	done := make(chan struct{})
	go func() { _ = srv.Serve(tls.NewListener(countingListener{ln, n}, cfg)); close(done) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return n
}

// A holder of the gossip key claims the leadership of shard s1 for an
// address whose certificate is another shard's: the first request's
// handshake there fails and it is served by a member; no later request
// tries the claim again, until the claim changes.
func TestALeaderClaimThatFailsItsHandshakeIsNotFollowedAgain(t *testing.T) {
	ca := pkitest.New(t)
	member := serveCounted(t, ca.Creds(t, pkitest.Shard("s1", "n1")).Server(nil))
	impostor := serveCounted(t, ca.Creds(t, pkitest.Shard("s2", "n1")).Server(nil))

	key := bytes.Repeat([]byte{9}, 32)
	mine, err := gossip.New(gossip.Config{NodeName: "g1", BindAddr: "127.0.0.1:0", Fast: true, Keys: [][]byte{key},
		Meta: gossip.Meta{Role: gossip.RoleGateway}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = mine.Shutdown() })
	claim := gossip.Meta{Role: gossip.RoleShard, ShardID: "s1", NodeID: "n9", RaftState: gossip.StateLeader, Term: 7,
		Leader: "n9", LeaderHTTP: impostor.addr, HTTPAddr: impostor.addr}
	evil, err := gossip.New(gossip.Config{NodeName: "s1-n9", BindAddr: "127.0.0.1:0", Fast: true, Keys: [][]byte{key},
		Meta: claim, Join: []string{mine.Addr()}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = evil.Shutdown() })
	waitClaim := func(term uint64) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			if m, ok := mine.Leader("s1"); ok && m.Meta.Term == term {
				return
			}
			require.True(t, time.Now().Before(deadline), "gossip never carried the claim of term %d", term)
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitClaim(7)

	c := New(Config{RetryTimeout: 5 * time.Second, TLS: ca.Creds(t, pkitest.Gateway), Gossip: mine})
	t.Cleanup(c.Close)
	rt, err := c.Route("s1", member.addr, nil)
	require.NoError(t, err)
	require.Equal(t, impostor.addr, rt.Current().Host(), "gossip's claim is followed at first")
	// Gossip changes all the time (every node's load, say); each change
	// makes the router look at the leaders again (Client.Run), as here.
	gossipChanges := func(load int64) {
		require.NoError(t, evil.UpdateMeta(func(m *gossip.Meta) { m.Load = load }))
		deadline := time.Now().Add(20 * time.Second)
		for {
			if m, ok := mine.Leader("s1"); ok && m.Meta.Load == load {
				break
			}
			require.True(t, time.Now().Before(deadline), "gossip never carried the change")
			time.Sleep(10 * time.Millisecond)
		}
		c.router.refresh()
	}
	for i := range 10 {
		gossipChanges(int64(i + 1))
		resp, err := call(t, c, rt, fasthttp.MethodPost)
		require.NoError(t, err)
		require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	}
	require.EqualValues(t, 1, impostor.conns.Load(), "one handshake with the claimant, not one a request")
	require.Equal(t, member.addr, rt.Current().Host())

	// A new claim (another term) is tried again: it may be a real leader.
	require.NoError(t, evil.UpdateMeta(func(m *gossip.Meta) { m.Term = 8 }))
	waitClaim(8)
	c.router.refresh()
	require.Equal(t, impostor.addr, rt.Current().Host(), "a new claim is followed")
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.EqualValues(t, 2, impostor.conns.Load(), "a new claim gets one handshake")
}
