package shard

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/tunnel"
)

// overTunnel is b called the way the hosted gateway calls a self-hosted
// node: the node dials a real tunnel registry (a gateway's certificate,
// as the gateway's tunnel listener shows) and serves its API on the
// tunnel (Node.Serve), and each request is a stream of that tunnel,
// carrying the gateway's TLS identity.
func overTunnel(t *testing.T, b *bundle) *bundle {
	t.Helper()
	log := b.srv.cfg.Logger
	reg, err := tunnel.NewRegistry(tunnel.RegistryConfig{TLS: testCA(t).Creds(t, pkitest.Gateway), Logger: log})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan struct{})
	go func() { _ = reg.Serve(ln); close(served) }()
	agent, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: ln.Addr().String(), TLS: b.srv.cfg.TLS,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: log})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { _ = agent.Run(ctx); close(ran) }()
	t.Cleanup(func() { stop(); <-ran; _ = reg.Close(); <-served })
	b.srv.Serve(agent.Listener())
	id := b.srv.cfg.TLS.Identity()
	eventually(t, 30*time.Second, func() bool { return reg.Connected(id.Shard, id.Node) }, id.Node+"'s tunnel is up")

	tr := &http.Transport{DialContext: reg.NodeDialer(id.Shard, id.Node)}
	t.Cleanup(tr.CloseIdleConnections)
	c := *b
	c.client = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	c.url = "http://" + id.Node
	return &c
}
