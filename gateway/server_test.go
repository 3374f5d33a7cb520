package gateway

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	c.ControlURL = "https://10.0.0.1:7070, https://10.0.0.2:7070,https://10.0.0.3:7070"
	require.NoError(t, c.Validate(), "several control nodes, comma-separated")

	for name, cfg := range map[string]Config{
		"no control":     {TLS: gw},
		"bad control":    {ControlURL: "ftp://x", TLS: gw},
		"plain control":  {ControlURL: "http://x", TLS: gw},
		"one plain":      {ControlURL: "https://x,http://y", TLS: gw},
		"empty part":     {ControlURL: "https://x,,https://y", TLS: gw},
		"no host":        {ControlURL: "https://x,https://", TLS: gw},
		"no TLS":         {ControlURL: "https://x"},
		"negative limit": {ControlURL: "https://x", TLS: gw, BodyLimit: -1},
		"negative cache": {ControlURL: "https://x", TLS: gw, PlacementCacheSize: -1},
	} {
		_, err := New(cfg)
		require.Error(t, err, name)
	}
}

func TestServerLifecycle(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	gw, err := New(Config{Addr: "127.0.0.1:0", ControlURL: b.control.srv.URL, TLS: b.ca.Creds(t, pkitest.Gateway), Logger: slog.New(slog.DiscardHandler)})
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

func TestParseJWKS(t *testing.T) {
	t.Parallel()
	good := newSigner(t, "k1").jwk()
	keys, err := parseJWKS(tenancy.JWKS{Keys: []tenancy.JWK{
		good,
		{Kty: "OKP", Crv: "Ed25519", Kid: "broken", X: "!!"},
		{Kty: "RSA", Kid: "rsa"},
		{Kty: "OKP", Crv: "X25519", Kid: "x", X: good.X},
		{Kty: "OKP", Crv: "Ed25519", Kid: "enc", X: good.X, Use: "enc"},
	}})
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Contains(t, keys, "k1")

	_, err = parseJWKS(tenancy.JWKS{})
	require.Error(t, err, "a set without usable keys is refused")
	bad := good
	bad.X = base64.RawURLEncoding.EncodeToString([]byte("short"))
	_, err = parseJWKS(tenancy.JWKS{Keys: []tenancy.JWK{bad}})
	require.Error(t, err)
}

func TestCachesAreBoundedLRU(t *testing.T) {
	t.Parallel()
	gw, err := New(Config{ControlURL: "https://127.0.0.1:1", TLS: pkitest.New(t).Creds(t, pkitest.Gateway), TokenCacheSize: 16, PlacementCacheSize: 16})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, gw.Stop()) })

	tokens := gw.auth.tokens
	for i := range 1000 {
		tokens.Add(strconv.Itoa(i), verifiedKey{expires: int64(i)})
		require.LessOrEqual(t, tokens.Len(), 16)
	}
	v, ok := tokens.Get("999")
	require.True(t, ok, "the newest entry survives eviction")
	require.EqualValues(t, 999, v.expires)
	_, ok = tokens.Get("984") // the oldest, now just used
	require.True(t, ok)
	tokens.Add("1000", verifiedKey{})
	require.True(t, tokens.Contains("984"), "a recently used entry survives eviction")
	require.False(t, tokens.Contains("985"), "the least recently used entry goes first")

	places := gw.placements.cache
	for i := range 1000 {
		places.Add(placementKey{tenant: tenantA, ns: strconv.Itoa(i)}, &placement{})
		require.LessOrEqual(t, places.Len(), 16)
	}
	require.True(t, places.Contains(placementKey{tenant: tenantA, ns: "999"}))
}
