package tunnel

import (
	"crypto/tls"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// BenchmarkRoundTrip compares a small request's round trip from a
// gateway's fasthttp pool to a shard node's fasthttp server: through the
// tunnel (a stream per pooled connection, one TLS connection under all
// of them) and direct over mutual TLS, both on loopback, with 1 and 64
// requests in flight.
//
//	go test -run '^$' -bench RoundTrip -benchtime 5s ./internal/tunnel/
func BenchmarkRoundTrip(b *testing.B) {
	for _, inflight := range []int{1, 64} {
		b.Run("direct/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			benchRoundTrip(b, directClient(b), "https://node"+benchPath, inflight)
		})
		b.Run("tunnel/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			benchRoundTrip(b, tunnelClient(b), "http://node"+benchPath, inflight)
		})
	}
}

const benchPath = "/api/v1/queues"

// echoServer is a shard node's HTTP server that answers a small JSON body.
func echoServer(b *testing.B, ln net.Listener) {
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"ok":true}`)
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	b.Cleanup(func() { _ = srv.Shutdown(); <-done })
}

func directClient(b *testing.B) *fasthttp.HostClient {
	ca := pkitest.New(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	echoServer(b, tls.NewListener(ln, ca.Creds(b, pkitest.Shard("s1", "n1")).Server(pki.Roles(pki.RoleGateway))))
	hc := &fasthttp.HostClient{Addr: ln.Addr().String(), IsTLS: true,
		TLSConfig: ca.Creds(b, pkitest.Gateway).Client(pki.ShardMember("s1")), MaxConns: 64}
	b.Cleanup(hc.CloseIdleConnections)
	return hc
}

func tunnelClient(b *testing.B) *fasthttp.HostClient {
	ca := pkitest.New(b)
	h := startRegistry(b, ca.Creds(b, pkitest.Gateway), "127.0.0.1:0")
	a, _ := startAgent(b, ca.Creds(b, pkitest.Shard("s1", "n1")), h.addr, nil)
	echoServer(b, a.Listener())
	waitAgent(b, a, "connected", connected)
	waitRegistry(b, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })
	hc := &fasthttp.HostClient{Addr: Addr("s1", "n1"), Dial: h.Dial, MaxConns: 64}
	b.Cleanup(hc.CloseIdleConnections)
	return hc
}

// benchRoundTrip sends b.N requests from inflight goroutines and reports
// the rate and the latency's median and 99th percentile.
func benchRoundTrip(b *testing.B, hc *fasthttp.HostClient, url string, inflight int) {
	var next atomic.Int64
	lat := make([][]time.Duration, inflight)
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := range inflight {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(url)
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := hc.DoTimeout(req, resp, 10*time.Second); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
				if resp.StatusCode() != fasthttp.StatusOK {
					b.Errorf("status %d", resp.StatusCode())
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
