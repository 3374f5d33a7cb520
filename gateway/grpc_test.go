package gateway

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/jobbie/jobbie/internal/apierr"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// With the public certificate, the gRPC listener speaks HTTP/2 over TLS
// with it: a gRPC call there goes through the route's chain to the
// namespace's shard as the HTTP request does, with the shard's headers
// of an admitted request; the same call without TLS is not served.
func TestGRPCListenerServesTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pool := selfSigned(t, dir, "grpc")
	b := setup(t, func(c *Config) {
		c.PublicCertFile, c.PublicKeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		c.GRPCAddr = "127.0.0.1:0"
	})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	jobs := jobbiev1connect.NewJobServiceClient(&http.Client{Transport: tr}, "https://"+b.gw.GRPCAddr(), connect.WithGRPC())
	call := func(c jobbiev1connect.JobServiceClient) (*connect.Response[jobbiev1.EnqueueResponse], error) {
		req := connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "emails.send"})
		req.Header().Set("Authorization", "Bearer "+b.key(t, tenancy.RoleProducer, "default", "emails"))
		req.Header().Set(wire.NamespaceHeader, "emails")
		return c.Enqueue(context.Background(), req)
	}
	res, err := call(jobs)
	require.NoError(t, err)
	require.Equal(t, "job_1", res.Msg.GetJobId())
	seen := b.shard.last(t)
	require.Equal(t, http.MethodPost, seen.Method)
	require.Equal(t, "/api/v1/enqueue", seen.URI)
	var body wire.EnqueueRequest
	require.NoError(t, json.Unmarshal([]byte(seen.Body), &body))
	require.Equal(t, "emails.send", body.Queue)
	require.Equal(t, tenancy.ShardNamespace(tenantA, "emails"), seen.Header.Get(wire.ShardNamespaceHeader))
	require.Equal(t, "1", seen.Header.Get(wire.FairWeightHeader), "the plan's headers, as on an HTTP request")
	require.Empty(t, seen.Header.Get("Authorization"), "the key never leaves the gateway")
	require.Equal(t, res.Header().Get(wire.RequestIDHeader), seen.Header.Get(wire.RequestIDHeader))

	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	plain := &http.Transport{Protocols: &p}
	t.Cleanup(plain.CloseIdleConnections)
	n := b.shard.count()
	_, err = call(jobbiev1connect.NewJobServiceClient(&http.Client{Transport: plain}, "http://"+b.gw.GRPCAddr(), connect.WithGRPC()))
	require.Error(t, err, "h2c is not served beside TLS")
	require.Equal(t, n, b.shard.count())
}

// A gRPC call and an HTTP request of one tenant draw on the same plan
// rate limit: one bucket, not one per protocol. Over it the call is
// ResourceExhausted with the HTTP API's code and the Retry-After as
// RetryInfo, and the shard never sees it.
func TestGRPCCallsShareTheHTTPRateLimit(t *testing.T) {
	t.Parallel()
	b, plans, _ := limitedSetup(t, func(c *Config) { c.GRPCAddr = "127.0.0.1:0" })
	plans.SetPlan(tenantA, limited("starter", 2, 0))
	key := b.key(t, tenancy.RoleOwner, "*")
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	jobs := jobbiev1connect.NewJobServiceClient(&http.Client{Transport: tr}, "http://"+b.gw.GRPCAddr(), connect.WithGRPC())
	enqueue := func() error {
		req := connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "emails.send"})
		req.Header().Set("Authorization", "Bearer "+key)
		_, err := jobs.Enqueue(context.Background(), req)
		return err
	}

	require.NoError(t, enqueue())
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
	seen := b.shard.count()
	err := enqueue()
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, connect.CodeResourceExhausted, ce.Code(), "%v", err)
	require.Contains(t, ce.Message(), "requests_per_second")
	require.Equal(t, "1", ce.Meta().Get("Retry-After"))
	var retry *errdetails.RetryInfo
	var info *errdetails.ErrorInfo
	for _, d := range ce.Details() {
		v, err := d.Value()
		require.NoError(t, err)
		switch v := v.(type) {
		case *errdetails.RetryInfo:
			retry = v
		case *errdetails.ErrorInfo:
			info = v
		}
	}
	require.Equal(t, time.Second, retry.GetRetryDelay().AsDuration())
	require.Equal(t, string(apierr.RateLimited), info.GetReason())
	b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	require.Equal(t, seen, b.shard.count(), "refused calls never reach the shard")
}

// A gRPC call's idempotency-key metadata is the HTTP header: an enqueue
// passes it to the shard and gives back its idempotency-replayed; a call
// whose route takes none is InvalidArgument naming it, and the shard sees
// nothing.
func TestGRPCIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.GRPCAddr = "127.0.0.1:0" })
	key := b.key(t, tenancy.RoleOwner, "*")
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	jobs := jobbiev1connect.NewJobServiceClient(&http.Client{Transport: tr}, "http://"+b.gw.GRPCAddr(), connect.WithGRPC())

	b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(wire.IdempotencyReplayedHeader, "true")
		writeJSON(w, http.StatusOK, map[string]any{"job_id": "job_1", "status": "pending"})
	})
	req := connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "emails.send"})
	req.Header().Set("Authorization", "Bearer "+key)
	req.Header().Set(wire.IdempotencyKeyHeader, "order-1")
	res, err := jobs.Enqueue(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "order-1", b.shard.last(t).Header.Get(wire.IdempotencyKeyHeader))
	require.Equal(t, "true", res.Header().Get(wire.IdempotencyReplayedHeader))

	seen := b.shard.count()
	get := connect.NewRequest(&jobbiev1.GetJobRequest{Id: "job_1"})
	get.Header().Set("Authorization", "Bearer "+key)
	get.Header().Set(wire.IdempotencyKeyHeader, "order-2")
	_, err = jobs.GetJob(context.Background(), get)
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, connect.CodeInvalidArgument, ce.Code(), "%v", err)
	require.Contains(t, ce.Message(), wire.IdempotencyKeyHeader)
	require.Equal(t, seen, b.shard.count())
}
