package leader

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/service"
)

// leaderNode is a real one-node group that leads, with its engine and
// service, on a fake clock.
func leaderNode(t *testing.T) (*engine.Engine, *replica.Node, *service.Service, *clockwork.FakeClock, context.Context) {
	t.Helper()
	clk := clockwork.NewFakeClockAt(time.Unix(1_800_000_000, 0).UTC())
	eng := engine.New(engine.Options{})
	node, err := replica.Open(replica.Config{Dir: t.TempDir(), Bootstrap: true, Clock: clk,
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}, eng.Registry())
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	require.NoError(t, node.WaitLeader(ctx))
	svc := service.New(service.Config{Clock: clk, Logger: quiet}, eng, node, live.NewWaiters(clk))
	t.Cleanup(svc.Close)
	return eng, node, svc, clk, ctx
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
