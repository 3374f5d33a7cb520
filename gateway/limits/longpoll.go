package limits

import (
	"sync"

	"github.com/jobbie/jobbie/internal/apierr"
)

// poller is who a long-poll counts against.
type poller struct{ tenant, key string }

// LongPolls counts the long-polls (fetches) waiting on this gateway per
// key and per tenant. Every waiting fetch holds a client connection and a
// shard connection, so one tenant's workers could otherwise take every
// descriptor the gateway has. Limits are per gateway: n gateways admit up
// to n times as many.
type LongPolls struct {
	perKey, perTenant int // <= 0: no limit

	mu      sync.Mutex
	keys    map[poller]int
	tenants map[string]int
}

// NewLongPolls caps the long-polls of one key at perKey and of one tenant
// at perTenant; <= 0 is no limit.
func NewLongPolls(perKey, perTenant int) *LongPolls {
	return &LongPolls{perKey: perKey, perTenant: perTenant, keys: map[poller]int{}, tenants: map[string]int{}}
}

// Acquire takes a place for a long-poll of key (its subject) of tenant,
// or says which limit is full.
func (lp *LongPolls) Acquire(tenant, key string) error {
	p := poller{tenant: tenant, key: key}
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

// Release gives back a place Acquire took.
func (lp *LongPolls) Release(tenant, key string) {
	p := poller{tenant: tenant, key: key}
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

// Waiting is how many long-polls key of tenant, and tenant, have waiting.
func (lp *LongPolls) Waiting(tenant, key string) (keys, tenants int) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.keys[poller{tenant: tenant, key: key}], lp.tenants[tenant]
}
