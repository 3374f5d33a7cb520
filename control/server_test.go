package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

func TestConfigDefaultsAndValidate(t *testing.T) {
	t.Parallel()
	ctl := pkitest.New(t).Creds(t, pkitest.Control)
	c := Config{DataDir: "/tmp/x", TLS: ctl}.WithDefaults()
	require.Equal(t, "127.0.0.1:8081", c.HTTPAddr)
	require.Equal(t, "127.0.0.1:0", c.RaftAddr)
	require.Equal(t, "control1", c.NodeID)
	require.Equal(t, 500*time.Millisecond, c.RaftTimeout)
	require.NotNil(t, c.Logger)
	require.NoError(t, c.Validate())

	bad := []Config{
		{TLS: ctl},
		{DataDir: "/tmp/x"},
		{DataDir: "/tmp/x", TLS: ctl, Shards: []ShardInfo{{ID: "", Addr: "x"}}},
		{DataDir: "/tmp/x", TLS: ctl, Shards: []ShardInfo{{ID: "a b", Addr: "x"}}},
		{DataDir: "/tmp/x", TLS: ctl, Shards: []ShardInfo{{ID: "s1"}}},
		{DataDir: "/tmp/x", TLS: ctl, Shards: []ShardInfo{{ID: "s1", Addr: "x"}, {ID: "s1", Addr: "y"}}},
	}
	for i, c := range bad {
		_, err := New(c)
		require.Error(t, err, "config %d", i)
	}
}

func TestStartServesOnAFreePortAndStopIsIdempotent(t *testing.T) {
	t.Parallel()
	srv, err := New(testConfig(t, pkitest.New(t)))
	require.NoError(t, err)
	require.Empty(t, srv.Addr())
	require.NoError(t, srv.Stop(), "stop before start")

	_, err = srv.Tenants(context.Background())
	require.Error(t, err, "not running yet")

	require.NoError(t, srv.Start(context.Background()))
	require.NotContains(t, srv.Addr(), ":0")
	require.Error(t, srv.Start(context.Background()), "second start")
	require.NoError(t, srv.Stop())
	require.NoError(t, srv.Stop())

	_, err = srv.Tenants(context.Background())
	require.Error(t, err, "stopped")
}

func TestStartGivesUpWhenContextEnds(t *testing.T) {
	t.Parallel()
	// An election timeout far beyond the deadline: no leader in time.
	srv, err := New(testConfig(t, pkitest.New(t), func(c *Config) { c.RaftTimeout = time.Minute }))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, srv.Start(ctx), context.DeadlineExceeded)
	require.NoError(t, srv.Stop())
}
