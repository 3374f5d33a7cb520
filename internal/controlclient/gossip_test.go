package controlclient

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// The control nodes gossip advertises are asked after the configured
// ones: a client configured with a node that is gone still reaches the
// group.
func TestGossipAddsControlNodes(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	n := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "gossiped"}))
	member := func(name string, meta gossip.Meta, join ...string) *gossip.Pool {
		p, err := gossip.New(gossip.Config{NodeName: name, BindAddr: "127.0.0.1:0", Meta: meta, Fast: true, Join: join,
			Keys: [][]byte{pkitest.GossipKey}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Shutdown() })
		return p
	}
	ctl := member("ctl-1", gossip.Meta{Role: gossip.RoleControl, NodeID: "c1", HTTPAddr: strings.TrimPrefix(n.srv.URL, "https://")})
	gw := member("gw-1", gossip.Meta{Role: gossip.RoleGateway}, ctl.Addr())
	require.Eventually(t, func() bool { return gw.NumMembers() == 2 }, 10*time.Second, 10*time.Millisecond)

	dead := deadURL(t)
	c := New(Config{URL: dead, TLS: ca.Creds(t, pkitest.Gateway).Client(pki.Roles(pki.RoleControl)), Gossip: gw, Timeout: time.Second})
	t.Cleanup(c.Close)
	require.Equal(t, []string{dead, n.srv.URL}, c.candidates(), "configured first, then gossip's")
	require.Equal(t, "gossiped", readNode(t, c))
}
