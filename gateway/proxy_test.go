package gateway

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestProxyForwardsWithShardCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleWorker, "emails")
	body := []byte(`{"result":{"sent":true}}`)
	r := b.do(t, http.MethodPost, "/api/v1/ack/job_01HX?trace=1", key, body, "X-Request-Id", "req-abc", "X-Custom", "dropped")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, "req-abc", r.header.Get("X-Request-Id"))
	require.JSONEq(t, `{"job_id":"job_1","status":"pending","unique_existing":false}`, string(r.body))

	got := b.shard.last(t)
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/api/v1/ack/job_01HX?trace=1", got.URI)
	require.Equal(t, string(body), got.Body)
	require.Empty(t, got.Header.Get("Authorization"), "no secret: the gateway's certificate speaks for it")
	require.Equal(t, pkitest.Gateway, got.Peer)
	require.Equal(t, tenancy.ShardNamespace(tenantA, "emails"), got.Header.Get(wire.ShardNamespaceHeader))
	require.Equal(t, "req-abc", got.Header.Get("X-Request-Id"))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Empty(t, got.Header.Get("X-Custom"))
	for name, vals := range got.Header {
		for _, v := range vals {
			require.NotContains(t, v, key, "the client's key leaked to the shard in %s", name)
		}
	}
}

func TestProxyTenantsAreKeptApart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleViewer, "default"))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodGet, "/api/v1/jobs/job_1", keyB, nil).status)
	require.Equal(t, tenancy.ShardNamespace(tenantB, "default"), b.shard.last(t).Header.Get(wire.ShardNamespaceHeader))

	// Tenant B has no "emails": its own key cannot reach tenant A's.
	all := b.signer.Sign(claimsFor(tenantB, "key_b2", tenancy.RoleOwner, "*"))
	b.do(t, http.MethodGet, "/api/v1/jobs/job_1", all, nil, wire.NamespaceHeader, "emails").
		requireError(t, http.StatusNotFound, apierr.NotFound)
}

func TestProxyShardAnswersPassThrough(t *testing.T) {
	t.Parallel()
	// no_leader is retried (routing_test.go) and, when the budget runs
	// out, the shard's last answer is the client's.
	b := setup(t, func(c *Config) { c.LeaderRetryTimeout = 100 * time.Millisecond })
	key := b.key(t, tenancy.RoleWorker, "default")
	cases := []struct {
		status     int
		code       apierr.Code
		retryAfter string
	}{
		{http.StatusConflict, apierr.LeaseMismatch, ""},
		{http.StatusNotFound, apierr.NotFound, ""},
		{http.StatusTooManyRequests, apierr.RateLimited, "7"},
		{http.StatusServiceUnavailable, apierr.NoLeader, "2"},
		{http.StatusBadRequest, apierr.BadRequest, ""},
	}
	for _, tc := range cases {
		want := `{"error":{"code":"` + string(tc.code) + `","message":"from the shard","field":"x","request_id":"req_shard"}}`
		b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) {
			if tc.retryAfter != "" {
				w.Header().Set("Retry-After", tc.retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(want))
		})
		r := b.do(t, http.MethodPost, "/api/v1/fail/job_1", key, map[string]any{"error": "boom"})
		require.Equal(t, tc.status, r.status)
		require.Equal(t, want, string(r.body), "the shard's error must pass through unchanged")
		require.Equal(t, tc.retryAfter, r.header.Get("Retry-After"))
		require.Equal(t, "application/json", r.header.Get("Content-Type"))
	}

	b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	r := b.do(t, http.MethodPost, "/api/v1/fetch", key, map[string]any{"queues": []string{"q"}, "timeout": 0})
	require.Equal(t, http.StatusNoContent, r.status)
	require.Empty(t, r.body)
}

func TestProxyBodyLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleProducer, "default")
	big := jsonOfSize(1<<20 + 1)

	e := b.do(t, http.MethodPost, "/api/v1/enqueue", key, big).requireError(t, http.StatusRequestEntityTooLarge, apierr.TooLarge)
	require.Contains(t, e.Message, "limit")
	require.Zero(t, b.shard.count())

	r := b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, jsonOfSize(2<<20))
	require.Equal(t, http.StatusCreated, r.status, "a batch may exceed the single-request limit")
	require.Len(t, b.shard.last(t).Body, 2<<20)
}

// jsonOfSize is a JSON object of exactly n bytes.
func jsonOfSize(n int) []byte {
	const head, tail = `{"pad":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

func TestProxyUnknownNamespace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	for range 3 {
		e := b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.NamespaceHeader, "nope").
			requireError(t, http.StatusNotFound, apierr.NotFound)
		require.Contains(t, e.Message, `"nope"`)
	}
	require.Equal(t, int64(1), b.control.PlacementCalls.Load(), "a missing namespace is cached briefly")
}

func TestProxyPlacementIsCached(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleProducer, "default")
	for range 5 {
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
	}
	require.Equal(t, int64(1), b.control.PlacementCalls.Load())
}

func TestProxyShardDown(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())
	b.control.AddNamespace(tenantA, "down", "s-down", dead)
	clk := clockwork.NewFakeClock()
	// A refused connection is retried for LeaderRetryTimeout (wall clock);
	// a short one keeps the test quick.
	b.start(t, func(c *Config) { c.Clock = clk; c.LeaderRetryTimeout = 100 * time.Millisecond })
	b.waitReady(t)

	key := b.key(t, tenancy.RoleProducer, "down")
	for range 2 {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
		e := r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
		require.Equal(t, "1", r.header.Get("Retry-After"))
		require.NotContains(t, e.Message, dead, "shard addresses are not for tenants")
		tick(t, clk, b.gw.cfg.PlacementMissTTL) // well short of PlacementTTL
	}
	require.Equal(t, int64(2), b.control.PlacementCalls.Load(), "a failed shard's placement is looked up afresh")
}

func TestProxyLongPollOutlastsShardTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ShardTimeout = 300 * time.Millisecond })
	key := b.key(t, tenancy.RoleDeveloper, "default")
	// The fake shard holds each request like a long-poll with no job would.
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	})

	r := b.do(t, http.MethodPost, "/api/v1/fetch", key, map[string]any{"queues": []string{"q"}, "timeout": 2})
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)

	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	e := r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Contains(t, e.Message, "in time")
}

// A fetch asking for a longer wait than the protocol allows is refused at
// the gateway with the shard's own rule, and never reaches the shard.
func TestProxyRefusesOutOfBoundsLongPolls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleWorker, "default")
	for _, path := range []string{"/api/v1/fetch", "/api/v1/fetch/batch"} {
		r := b.do(t, http.MethodPost, path, key, map[string]any{"queues": []string{"q"}, "timeout": 120})
		e := r.requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, "timeout", e.Field, path)
	}
	require.Zero(t, b.shard.count(), "nothing was proxied")
}

func TestProxyRefusesOddPaths(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleViewer, "default")
	for _, p := range []string{"/api/v1/jobs/%2e%2e", "/api/v1/jobs/..", "/api/v1/jobs/a%2Fb"} {
		b.do(t, http.MethodGet, p, key, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	}
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleProducer, "default"), []byte("{}"), "Content-Encoding", "gzip")
	r.requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Zero(t, b.shard.count())
}
