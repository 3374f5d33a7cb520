package gateway

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// pinging is a shard event stream that sends a comment every period until
// the request ends, then closes ended.
func pinging(period time.Duration, ended chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, ": ping %d\n\n", i); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(period):
			}
		}
	}
}

// openStream opens GET /api/v1/events through the gateway.
func (b *bundle) openStream(t *testing.T, key string, headers ...string) (*http.Response, *bufio.Reader, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", b.base+"/api/v1/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body), cancel
}

func TestStreamBytesArriveBeforeTheResponseEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release, ended := make(chan struct{}), make(chan struct{})
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 7\nevent: enqueued\ndata: {\"job_id\":\"job_1\"}\n\n")
		w.(http.Flusher).Flush()
		select { // the response stays open until the test has read the event
		case <-release:
		case <-r.Context().Done():
		}
	})
	resp, rd, _ := b.openStream(t, b.key(t, tenancy.RoleViewer, "emails"), wire.NamespaceHeader, "emails", wire.LastEventIDHeader, "3")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	for _, want := range []string{"id: 7\n", "event: enqueued\n", "data: {\"job_id\":\"job_1\"}\n"} {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, want, line)
	}
	close(release)
	<-ended

	got := b.shard.last(t)
	require.Equal(t, "/api/v1/events", got.URI)
	require.Empty(t, got.Header.Get("Authorization"), "the shard never gets the key")
	require.Equal(t, pkitest.Gateway, got.Peer, "the shard knows the gateway by its certificate")
	require.Equal(t, tenancy.ShardNamespace(tenantA, "emails"), got.Header.Get(wire.ShardNamespaceHeader))
	require.Equal(t, "3", got.Header.Get(wire.LastEventIDHeader))
	require.NotEmpty(t, got.Header.Get(apierr.RequestIDHeader))
}

func TestStreamEndsUpstreamWhenTheClientGoesAway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ended := make(chan struct{})
	b.shard.setHandler(pinging(20*time.Millisecond, ended))
	_, rd, cancel := b.openStream(t, b.key(t, tenancy.RoleProducer, "default"))
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, ": ping"))
	cancel()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the shard's stream outlived the client")
	}
}

func TestStreamOutlivesTheWriteTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.WriteTimeout = 100 * time.Millisecond; c.ShardTimeout = 100 * time.Millisecond })
	ended := make(chan struct{})
	b.shard.setHandler(pinging(30*time.Millisecond, ended))
	_, rd, cancel := b.openStream(t, b.key(t, tenancy.RoleViewer, "default"))
	start := time.Now()
	for time.Since(start) < 600*time.Millisecond {
		_, err := rd.ReadString('\n')
		require.NoError(t, err, "the stream is cut by no request timeout")
	}
	cancel()
	<-ended
}

func TestStreamEndsWhenTheGatewayStops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ended := make(chan struct{})
	b.shard.setHandler(pinging(time.Hour, ended)) // one ping, then silence
	_, rd, _ := b.openStream(t, b.key(t, tenancy.RoleViewer, "default"))
	_, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.NoError(t, b.gw.Stop())
	<-ended
	for err == nil {
		_, err = rd.ReadString('\n')
	}
}

func TestStreamRefusals(t *testing.T) {
	t.Parallel()
	// no_leader is retried for LeaderRetryTimeout (wall clock); a short one
	// keeps the test quick.
	b := setup(t, func(c *Config) { c.LeaderRetryTimeout = 100 * time.Millisecond })
	ended := make(chan struct{})
	b.shard.setHandler(pinging(time.Hour, ended))
	b.do(t, "GET", "/api/v1/events", "", nil).requireError(t, 401, apierr.Unauthenticated)
	b.do(t, "GET", "/api/v1/events", b.key(t, tenancy.RoleBilling, "default"), nil).requireError(t, 403, apierr.Forbidden)
	b.do(t, "GET", "/api/v1/events", b.key(t, tenancy.RoleProducer, "emails"), nil, wire.NamespaceHeader, "default").
		requireError(t, 403, apierr.Forbidden)
	require.Zero(t, b.shard.count(), "refused streams never reach the shard")

	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, wire.ErrorBody{Error: &wire.Error{Code: apierr.NoLeader, Message: "no leader", RequestID: r.Header.Get(apierr.RequestIDHeader)}})
	})
	r := b.do(t, "GET", "/api/v1/events", b.key(t, tenancy.RoleViewer, "default"), nil)
	r.requireError(t, 503, apierr.NoLeader)
	require.Equal(t, "1", r.header.Get("Retry-After"))
}

func TestWorkersRouteIsProxied(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"workers": []any{}})
	})
	r := b.do(t, "GET", "/api/v1/workers", b.key(t, tenancy.RoleWorker, "default"), nil)
	require.Equal(t, 200, r.status, string(r.body))
	require.Equal(t, "/api/v1/workers", b.shard.last(t).URI)
	b.do(t, "GET", "/api/v1/workers", b.key(t, tenancy.RoleBilling, "default"), nil).requireError(t, 403, apierr.Forbidden)
}
