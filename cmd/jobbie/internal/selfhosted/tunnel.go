package selfhosted

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/tunnel"
)

// Server serves a node's API on a listener (*shard.Node).
type Server interface{ Serve(net.Listener) }

// DialTunnels dials every hosted gateway tunnel listener of addrs
// (Record.Tunnels) and serves the node's API on each tunnel, reconnecting
// with backoff until ctx ends. The node listens for no one outside its
// own cluster. A gateway serves the shard's namespaces only over a tunnel
// of its own, so behind one load-balanced address a node is served by the
// gateway that address led it to; one address per gateway reaches them
// all.
func DialTunnels(ctx context.Context, node Server, addrs []string, creds *pki.Credentials, log *slog.Logger) error {
	if len(addrs) == 0 {
		return errors.New("no tunnel address: control named none at join; pass --tunnel host:port")
	}
	for _, addr := range addrs {
		agent, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: addr, TLS: creds, Logger: log})
		if err != nil {
			return err
		}
		node.Serve(agent.Listener())
		go func() { _ = agent.Run(ctx) }()
	}
	return nil
}
