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
	benchProxyEnqueue(b,
		func(bb *bundle) { servePlans(b, bb.control).set(tenantA, limited("bench", 1e12, 1e12)) },
		func(resp *fasthttp.Response) bool { return len(resp.Header.Peek("RateLimit")) > 0 })
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
