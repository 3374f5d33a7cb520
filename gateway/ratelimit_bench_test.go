package gateway

import (
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/tenancy"
)

// BenchmarkProxyEnqueueRateLimited is BenchmarkProxyEnqueue for a tenant
// whose plan has both rate limits, set too high to refuse anything: the
// cost of the buckets and the RateLimit fields on the hot path.
func BenchmarkProxyEnqueueRateLimited(b *testing.B) {
	bb := newBundle(b)
	servePlans(b, bb.control).set(tenantA, limited("bench", 1e12, 1e12))
	shardAddr := startInstantShard(b, bb.ca)
	bb.control.addNamespace(tenantA, "bench", "bench", shardAddr)
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
			if resp.StatusCode() != fasthttp.StatusCreated || len(resp.Header.Peek("RateLimit")) == 0 {
				b.Errorf("status %d, RateLimit %q: %s; header %s", resp.StatusCode(), resp.Header.Peek("RateLimit"), resp.Body(), resp.Header.String())
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// benchLimits is a gateway's rate-limit state without its server: a plan
// cache holding tenant A with lim (no limits when nil).
func benchLimits(b *testing.B, rps, eps int64) *Server {
	clk := clockwork.NewRealClock()
	rs := newRateSync(Config{Clock: clk, RateLimitSyncInterval: time.Second})
	s := &Server{cfg: Config{Clock: clk}, plans: &planCache{clock: clk, rates: rs}}
	e := &planEntry{tid: tenantA}
	e.plan.Store(&cachedPlan{tp: limited("bench", rps, eps)})
	s.plans.entries.Store(tenantA, e)
	s.plans.applyLimits(e, clk.Now())
	require.Equal(b, rps > 0 || eps > 0, e.rates.Load() != nil)
	return s
}

// benchRateLimit runs limitRate on an enqueue of tenant A, in parallel.
func benchRateLimit(b *testing.B, s *Server) {
	app := fiber.New()
	rt := route{method: fiber.MethodPost, path: enqueuePath}
	r := &call{key: &tenancy.KeyClaims{TenantID: tenantA}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		fctx := &fasthttp.RequestCtx{}
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		for pb.Next() {
			if err := s.limitRate(c, rt, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkLimitRateNoLimits is the admission check of a tenant whose
// plan sets no rate limit: one map lookup.
func BenchmarkLimitRateNoLimits(b *testing.B) { benchRateLimit(b, benchLimits(b, 0, 0)) }

// BenchmarkLimitRateLimited is the check of a tenant with both limits,
// none refusing: two buckets taken and the RateLimit fields written.
func BenchmarkLimitRateLimited(b *testing.B) { benchRateLimit(b, benchLimits(b, 1e12, 1e12)) }
