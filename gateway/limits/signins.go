package limits

import (
	"net/netip"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
)

// maxSignInKeys bounds the addresses and the tenants whose sign-in
// buckets a gateway keeps; past it the least recently seen is forgotten
// (its next step starts from a full bucket), so a flood of addresses
// cannot grow the gateway's memory.
const maxSignInKeys = 50000

// The limit labels of jobbie_gateway_limited_total for sign-ins.
const (
	limitSignInsPerAddr   = "sso_signins_per_address"
	limitSignInsPerTenant = "sso_signins_per_tenant"
)

// SignIns holds the console's unauthenticated sign-in steps through a
// tenant's identity provider (its start and its callback, each a control
// lookup and calls to the provider) to a rate per client address
// (listen.ClientKey: an IPv6 one per /64) and per tenant, each a token
// bucket of perMinute steps a minute that holds up to a minute's worth.
// Unlike a plan's rates these are the gateway's own: nobody is signed in
// yet to have a plan.
type SignIns struct {
	clock              clockwork.Clock
	perAddr, perTenant int
	mu                 sync.Mutex
	byAddr, byTenant   *lru.Cache[string, *bucket]
}

// NewSignIns allows perAddr steps a minute from each client address and
// perTenant a minute for each tenant (<= 0: no limit).
func NewSignIns(perAddr, perTenant int, clock clockwork.Clock) *SignIns {
	byAddr, _ := lru.New[string, *bucket](maxSignInKeys) // only a size <= 0 fails
	byTenant, _ := lru.New[string, *bucket](maxSignInKeys)
	return &SignIns{clock: clock, perAddr: perAddr, perTenant: perTenant, byAddr: byAddr, byTenant: byTenant}
}

// Allow takes one step for c's client address and, when tenant is not
// empty, for tenant: nil, or a 429 rate_limited with Retry-After naming
// the limit. A step refused by one limit takes nothing from the other.
func (s *SignIns) Allow(c *fiber.Ctx, tenant string) error {
	return s.allow(listen.ClientKey(c.Context().RemoteAddr()), tenant)
}

func (s *SignIns) allow(addr netip.Prefix, tenant string) error {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var ab *bucket
	if addr.IsValid() && s.perAddr > 0 {
		ab = s.bucketOf(s.byAddr, addr.String(), s.perAddr, now)
		if ok, wait := ab.take(now, 1); !ok {
			refusedTotal.WithLabelValues(limitSignInsPerAddr).Inc()
			return apierr.Retry(apierr.RateLimited, retryAfter(wait),
				"too many sign-ins from %s: the limit is %d a minute per address; retry later", clientName(addr), s.perAddr)
		}
	}
	if tenant != "" && s.perTenant > 0 {
		if ok, wait := s.bucketOf(s.byTenant, tenant, s.perTenant, now).take(now, 1); !ok {
			if ab != nil {
				ab.giveBack(1)
			}
			refusedTotal.WithLabelValues(limitSignInsPerTenant).Inc()
			return apierr.Retry(apierr.RateLimited, retryAfter(wait),
				"too many sign-ins to this tenant: the limit is %d a minute; retry later", s.perTenant)
		}
	}
	return nil
}

// bucketOf is key's bucket in m, a full one when it has none.
func (s *SignIns) bucketOf(m *lru.Cache[string, *bucket], key string, perMinute int, now time.Time) *bucket {
	if b, ok := m.Get(key); ok {
		return b
	}
	b := &bucket{rate: float64(perMinute) / 60, burst: float64(perMinute), tokens: float64(perMinute), last: now}
	m.Add(key, b)
	return b
}
