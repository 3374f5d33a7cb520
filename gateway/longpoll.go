package gateway

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// proxiedLongPoll is a fetch: admitted against the long-poll limits, then
// proxied with a deadline that outlasts its wait.
var proxiedLongPoll = endpoint{handle: (*Server).longPoll, queues: true}

// longPoll holds a place among the key's and the tenant's long-polls for
// as long as the fetch waits. Every waiting fetch holds a client
// connection and a shard connection, so one tenant's workers could
// otherwise take every descriptor the gateway has.
func (s *Server) longPoll(c *fiber.Ctx, r *call) error {
	who := pollerOf(r)
	if err := s.polls.acquire(who); err != nil {
		return err
	}
	defer s.polls.release(who)
	return s.forwardLongPoll(c, r)
}

// poller is who a long-poll counts against.
type poller struct{ tenant, key string }

func pollerOf(r *call) poller { return poller{tenant: r.key.TenantID, key: r.key.Subject} }

// longPolls counts the long-polls waiting on this gateway per key and per
// tenant. Limits are per gateway: n gateways admit up to n times as many.
type longPolls struct {
	perKey, perTenant int // <= 0: no limit

	mu      sync.Mutex
	keys    map[poller]int
	tenants map[string]int
}

func newLongPolls(perKey, perTenant int) *longPolls {
	return &longPolls{perKey: perKey, perTenant: perTenant, keys: map[poller]int{}, tenants: map[string]int{}}
}

// acquire takes a place for p, or says which limit is full.
func (lp *longPolls) acquire(p poller) error {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if n := lp.keys[p]; lp.perKey > 0 && n >= lp.perKey {
		refusedTotal.WithLabelValues(limitLongPollsPerKey).Inc()
		return apierr.Retry(apierr.KeyLongPollLimit, 1,
			"API key %s already has %d fetches waiting on this gateway, its limit: retry when one returns", p.key, n)
	}
	if n := lp.tenants[p.tenant]; lp.perTenant > 0 && n >= lp.perTenant {
		refusedTotal.WithLabelValues(limitLongPollsPerTenant).Inc()
		return apierr.Retry(apierr.TenantLongPollLimit, 1,
			"this tenant already has %d fetches waiting on this gateway, its limit: retry when one returns", n)
	}
	lp.keys[p]++
	lp.tenants[p.tenant]++
	longPollsWaiting.Inc()
	return nil
}

func (lp *longPolls) release(p poller) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	decrement(lp.keys, p)
	decrement(lp.tenants, p.tenant)
	longPollsWaiting.Dec()
}

// decrement lowers m[k], dropping it at zero so idle keys cost nothing.
func decrement[K comparable](m map[K]int, k K) {
	if n := m[k] - 1; n > 0 {
		m[k] = n
	} else {
		delete(m, k)
	}
}

// waiting is how many long-polls p's key and tenant have waiting.
func (lp *longPolls) waiting(p poller) (key, tenant int) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.keys[p], lp.tenants[p.tenant]
}
