package limits

import (
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// benchLimits is a gateway's rate-limit state without its server: plans
// holding tenant A with these limits (none when 0).
func benchLimits(b *testing.B, rps, eps int64) *Plans {
	clk := clockwork.NewRealClock()
	rs := newRateSync(Config{Clock: clk, RateLimitSyncInterval: time.Second})
	pc := &Plans{clock: clk, rates: rs}
	e := &planEntry{tid: tenantA}
	p := wire.Plan{Name: "bench", Currency: "USD", Version: 1}
	if rps > 0 {
		p.Limits.RequestsPerSecond = &rps
	}
	if eps > 0 {
		p.Limits.EnqueuesPerSecond = &eps
	}
	e.plan.Store(&cachedPlan{tp: wire.TenantPlan{Plan: p}})
	pc.entries.Store(tenantA, e)
	pc.applyLimits(e, clk.Now())
	require.Equal(b, rps > 0 || eps > 0, e.rates.Load() != nil)
	return pc
}

// benchRateLimit runs Limit on an enqueue of tenant A, in parallel.
func benchRateLimit(b *testing.B, pc *Plans) {
	app := fiber.New()
	r := &admitted.Request{Key: &tenancy.KeyClaims{TenantID: tenantA}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		fctx := &fasthttp.RequestCtx{}
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		for pb.Next() {
			if err := pc.Limit(c, r, OneJob); err != nil {
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
