package outbound

import (
	"context"
	"fmt"
	"sync"
)

// tenantSlots bounds the requests each tenant has in flight. A tenant's
// semaphore exists while it has requests in flight or waiting, so the
// map holds only active tenants.
type tenantSlots struct {
	per      int
	failFast bool

	mu      sync.Mutex
	tenants map[string]*tenantSem
}

type tenantSem struct {
	slots chan struct{}
	users int // requests holding or waiting for a slot
}

func newTenantSlots(per int, failFast bool) *tenantSlots {
	return &tenantSlots{per: per, failFast: failFast, tenants: map[string]*tenantSem{}}
}

// acquire takes one of the tenant's slots, waiting for the tenant's own
// requests to finish (never another tenant's); the release func gives it
// back.
func (t *tenantSlots) acquire(ctx context.Context, tenant string) (func(), error) {
	t.mu.Lock()
	s := t.tenants[tenant]
	if s == nil {
		s = &tenantSem{slots: make(chan struct{}, t.per)}
		t.tenants[tenant] = s
	}
	s.users++
	t.mu.Unlock()

	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots; t.leave(tenant, s) }, nil
	default:
	}
	if t.failFast {
		t.leave(tenant, s)
		return nil, &Error{Kind: KindBusy, Tenant: tenant, Reason: fmt.Sprintf("%d in flight", t.per)}
	}
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots; t.leave(tenant, s) }, nil
	case <-ctx.Done():
		t.leave(tenant, s)
		return nil, &Error{Kind: KindBusy, Tenant: tenant,
			Reason: fmt.Sprintf("%d in flight; gave up waiting for one to finish", t.per), Err: context.Cause(ctx)}
	}
}

func (t *tenantSlots) leave(tenant string, s *tenantSem) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(t.tenants, tenant)
	}
}
