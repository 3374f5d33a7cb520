package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	gw := pkitest.New(t).Creds(t, pkitest.Gateway)
	c := Config{ControlURL: "https://127.0.0.1:7070", TLS: gw}.WithDefaults()
	require.NoError(t, c.Validate())
	require.Equal(t, "127.0.0.1:8080", c.Addr)
	require.Equal(t, 1<<20, c.BodyLimit)
	require.Equal(t, 16<<20, c.BatchBodyLimit)
	require.Equal(t, time.Second, c.RevocationInterval)
	require.NotNil(t, c.Logger)
	require.NotNil(t, c.Clock)
	budget := listen.ProcessBudget()
	require.Equal(t, budget.Public, c.MaxConns, "the public port's total cap comes from the descriptor limit")
	require.Equal(t, budget.Pending, c.TunnelMaxHandshakes)
	require.Equal(t, listen.DefaultMaxPendingPerAddr, c.TunnelMaxHandshakesPerAddr)
	require.Equal(t, listen.DefaultHandshakeTimeout, c.TunnelHandshakeTimeout)
	c.ControlURL = "https://10.0.0.1:7070, https://10.0.0.2:7070,https://10.0.0.3:7070"
	require.NoError(t, c.Validate(), "several control nodes, comma-separated")

	for name, cfg := range map[string]Config{
		"no control":                        {TLS: gw},
		"bad control":                       {ControlURL: "ftp://x", TLS: gw},
		"plain control":                     {ControlURL: "http://x", TLS: gw},
		"one plain":                         {ControlURL: "https://x,http://y", TLS: gw},
		"empty part":                        {ControlURL: "https://x,,https://y", TLS: gw},
		"no host":                           {ControlURL: "https://x,https://", TLS: gw},
		"no TLS":                            {ControlURL: "https://x"},
		"negative limit":                    {ControlURL: "https://x", TLS: gw, BodyLimit: -1},
		"negative cache":                    {ControlURL: "https://x", TLS: gw, PlacementCacheSize: -1},
		"negative tunnel handshake timeout": {ControlURL: "https://x", TLS: gw, TunnelHandshakeTimeout: -time.Second},
	} {
		_, err := New(cfg)
		require.Error(t, err, name)
	}
}

func TestServerLifecycle(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	gw, err := New(Config{Addr: "127.0.0.1:0", ControlURL: controlURL, control: b.control, TLS: b.ca.Creds(t, pkitest.Gateway), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.Empty(t, gw.Addr())

	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, gw.Start(ctx))
	require.NotEmpty(t, gw.Addr())
	require.Error(t, gw.Start(ctx), "a second Start is refused")
	<-gw.Ready()

	resp, err := b.http.Get("http://" + gw.Addr() + "/healthz")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)

	cancel() // cancelling Start's context stops the server
	require.Eventually(t, func() bool { return gw.ctx.Err() != nil }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, gw.Stop())
	require.NoError(t, gw.Stop(), "Stop is idempotent")
	require.Error(t, gw.Start(context.Background()), "a stopped server does not restart")
}

func TestStopWaitsForRequestsInFlight(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.start(t)
	b.waitReady(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		close(arrived)
		<-release
		w.WriteHeader(http.StatusNoContent)
	})

	got := make(chan int, 1)
	go func() {
		got <- b.do(t, http.MethodPost, "/api/v1/fetch", b.key(t, tenancy.RoleWorker, "default"), map[string]any{"timeout": 5}).status
	}()
	<-arrived
	stopped := make(chan error, 1)
	go func() { stopped <- b.gw.Stop() }()
	close(release)
	require.Equal(t, http.StatusNoContent, <-got)
	require.NoError(t, <-stopped)
}
