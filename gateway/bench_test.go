package gateway

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
)

// BenchmarkProxyEnqueue measures the authenticated hot path: a producer's
// enqueue through the gateway (cached key, decision and placement) to a
// shard that answers at once. Client, gateway and shard share the machine,
// so req/s is a floor for the gateway alone.
func BenchmarkProxyEnqueue(b *testing.B) {
	benchProxyEnqueue(b, nil, func(*fasthttp.Response) bool { return true })
}

// benchProxyEnqueue runs enqueues of tenant A through a gateway to an
// instant shard, 16 in parallel per core; setup prepares the bundle before
// the gateway starts, and each answer must be a 201 that ok accepts.
func benchProxyEnqueue(b *testing.B, setup func(*bundle), ok func(*fasthttp.Response) bool) {
	bb := newBundle(b)
	if setup != nil {
		setup(bb)
	}
	shardAddr := startInstantShard(b, bb.ca)
	bb.control.AddNamespace(tenantA, "bench", "bench", shardAddr)
	bb.start(b)
	bb.waitReady(b)

	client := &fasthttp.HostClient{Addr: bb.gw.Addr(), MaxConns: 1024}
	b.Cleanup(client.CloseIdleConnections)
	auth := "Bearer " + bb.key(b, tenancy.RoleProducer, "bench")
	body := []byte(`{"queue":"emails.send","payload":{"to":"user@example.com","template":"welcome"}}`)
	uri := "http://" + bb.gw.Addr() + "/api/v1/enqueue"

	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(uri)
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.Set(fasthttp.HeaderAuthorization, auth)
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
		for pb.Next() {
			if err := client.Do(req, resp); err != nil {
				b.Error(err)
				return
			}
			if resp.StatusCode() != fasthttp.StatusCreated || !ok(resp) {
				b.Errorf("status %d: %s; header %s", resp.StatusCode(), resp.Body(), resp.Header.String())
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// startInstantShard serves a fixed enqueue answer with fasthttp, as node
// n1 of shard "bench" over mutual TLS, so the benchmark measures the
// gateway rather than the fake shard.
func startInstantShard(b *testing.B, ca *pkitest.CA) string {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	ln := tls.NewListener(tcp, ca.Creds(b, pkitest.Shard("bench", "n1")).Server(pki.Roles(pki.RoleGateway)))
	answer := []byte(`{"job_id":"job_01HX7Y2K3M","status":"pending","unique_existing":false}`)
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		c.SetStatusCode(fasthttp.StatusCreated)
		c.SetContentType("application/json")
		c.SetBody(answer)
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	b.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
	})
	return ln.Addr().String()
}

// BenchmarkProxyEnqueueRateLimited is BenchmarkProxyEnqueue for a tenant
// whose plan has both rate limits, set too high to refuse anything: the
// cost of the buckets and the RateLimit fields on the hot path.
func BenchmarkProxyEnqueueRateLimited(b *testing.B) {
	benchProxyEnqueue(b,
		func(bb *bundle) { bb.control.SetPlan(tenantA, limited("bench", 1e12, 1e12)) },
		func(resp *fasthttp.Response) bool { return len(resp.Header.Peek("RateLimit")) > 0 })
}
