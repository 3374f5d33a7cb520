package selfhosted

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// listeners records what a node is asked to serve on.
type listeners chan net.Listener

func (l listeners) Serve(ln net.Listener) { l <- ln }

// A node serves on one tunnel per address it dials; with none it refuses
// to start. Its agents stop with its context.
func TestDialTunnels(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	creds := ca.Creds(t, pki.Identity{Role: pki.RoleShard, Shard: "sh_1", Node: "n1", Tenant: joinTenant})
	log := slog.New(slog.DiscardHandler)
	served := make(listeners, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.EqualError(t, DialTunnels(ctx, served, nil, creds, log), "no tunnel address: control named none at join; pass --tunnel host:port")
	require.Empty(t, served)
	require.NoError(t, DialTunnels(ctx, served, []string{"127.0.0.1:1", "127.0.0.1:2"}, creds, log))
	a, b := <-served, <-served
	require.NotEqual(t, a, b, "a listener per tunnel")
	cancel() // the agents stop: the package's leak check fails the tests if one does not
}
