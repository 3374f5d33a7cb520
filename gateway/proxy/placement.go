package proxy

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/singleflight"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/tenancy"
)

// placement is where a namespace lives, resolved down to what the proxy
// needs so the hot path builds nothing.
type placement struct {
	route   *shardclient.Route // the shard's current leader, shared by its namespaces
	shardNS string             // tenancy.ShardNamespace(tenant, ns)
	missing bool               // control says the namespace does not exist
	expires atomic.Int64       // unix nanoseconds
}

type placementKey struct{ tenant, ns string }

// placements caches namespace → shard answers from control; which node of
// the shard to use is the router's business. When control cannot be
// asked, an expired answer serves on (load). Concurrent
// misses for one namespace share a single control call.
//
// Entries expire by their own expires field, not a cache-wide TTL:
// answers and misses live for different times, and retrySoon shortens a
// live entry in place. (expirable.LRU would also tell time by the wall
// clock and run a cleanup goroutine that never stops.)
type placements struct {
	cache   *lru.Cache[placementKey, *placement]
	control controlapi.Control
	shards  *shardclient.Client
	clock   clockwork.Clock
	ttl     time.Duration
	missTTL time.Duration
	log     *slog.Logger
	ctx     context.Context
	flight  singleflight.Group
}

// lookup returns the placement of namespace ns of tenant.
func (ps *placements) lookup(tenant, ns, requestID string) (*placement, error) {
	k := placementKey{tenant: tenant, ns: ns}
	if p, ok := ps.cache.Get(k); ok && ps.clock.Now().UnixNano() < p.expires.Load() {
		return p, p.err(ns)
	}
	k.ns = strings.Clone(ns) // ns may alias request memory
	return ps.fly(k, requestID)
}

// fly loads k's placement, one control call for the lookups that share a
// flight. A lookup that missed the cache just before an earlier flight
// filled it starts a flight of its own: the cache answers that one.
func (ps *placements) fly(k placementKey, requestID string) (*placement, error) {
	// Tenant ids never hold a NUL, so the flight key is unambiguous.
	v, err, _ := ps.flight.Do(k.tenant+"\x00"+k.ns, func() (any, error) {
		if p, ok := ps.cache.Get(k); ok && ps.clock.Now().UnixNano() < p.expires.Load() {
			return p, p.err(k.ns)
		}
		return ps.load(k, requestID)
	})
	return v.(*placement), err
}

// err is the lookup error a cached placement stands for.
func (p *placement) err(ns string) error {
	if p.missing {
		return namespaceNotFound(ns)
	}
	return nil
}

func namespaceNotFound(ns string) error {
	return apierr.New(apierr.NotFound, "namespace %q not found", ns)
}

// relocate is lookup for a request the shard of stale refused because
// the namespace is moving (moving.go): stale is forgotten, so requests ask
// control rather than the cache, and concurrent ones share one control
// call. A placement loaded since stale serves without another. If control
// cannot be asked, stale serves on (load), which only means the shard is
// asked again.
func (ps *placements) relocate(tenant, ns, requestID string, stale *placement) (*placement, error) {
	k := placementKey{tenant: tenant, ns: ns}
	if p, ok := ps.cache.Get(k); ok && p != stale && ps.clock.Now().UnixNano() < p.expires.Load() {
		return p, p.err(ns)
	}
	stale.expires.Store(0)
	k.ns = strings.Clone(ns)
	return ps.fly(k, requestID)
}

// invalidate forgets a placement, after a namespace was created through
// this gateway.
func (ps *placements) invalidate(tenant, ns string) {
	ps.cache.Remove(placementKey{tenant: tenant, ns: ns})
}

// retrySoon shortens a placement's life after its shard failed: the
// namespace may have moved, but while a shard is down control is asked
// again at most once per missTTL, not once per request.
func (ps *placements) retrySoon(p *placement) {
	soon := ps.clock.Now().Add(ps.missTTL).UnixNano()
	for {
		cur := p.expires.Load()
		if cur <= soon || p.expires.CompareAndSwap(cur, soon) {
			return
		}
	}
}

func (ps *placements) load(k placementKey, requestID string) (*placement, error) {
	info, err := ps.control.Namespace(ps.ctx, requestID, k.tenant, k.ns)
	if controlapi.NotFound(err) {
		p := &placement{missing: true}
		p.expires.Store(ps.clock.Now().Add(ps.missTTL).UnixNano())
		ps.cache.Add(k, p)
		return nil, namespaceNotFound(k.ns)
	}
	if err != nil {
		// Control is away (or unwell): a namespace seldom moves, and its
		// shard knows it, so the last placement known serves on for
		// another missTTL at a time rather than stopping the data plane
		// at the TTL. (Keys stay checked: a stale revocation list stops
		// requests on its own.) Only a namespace never placed here fails.
		if old, ok := ps.cache.Peek(k); ok && !old.missing {
			ps.log.Warn("gateway: placement lookup failed; serving the last one known", "tenant", k.tenant,
				"namespace", k.ns, "err", err)
			old.expires.Store(ps.clock.Now().Add(ps.missTTL).UnixNano())
			return old, nil
		}
		ps.log.Warn("gateway: placement lookup failed", "tenant", k.tenant, "namespace", k.ns, "err", err)
		return nil, apierr.Retry(apierr.Unavailable, 1, "cannot locate namespace %q right now; retry shortly", k.ns)
	}
	route, err := ps.shards.Route(info.ShardID, info.ShardAddr, info.ShardMembers)
	if err != nil {
		ps.log.Error("gateway: no usable shard address", "tenant", k.tenant, "namespace", k.ns, "shard", info.ShardID, "err", err)
		return nil, apierr.Retry(apierr.Unavailable, 1, "namespace %q has no usable shard right now; retry shortly", k.ns)
	}
	p := &placement{
		route:   route,
		shardNS: tenancy.ShardNamespace(k.tenant, k.ns),
	}
	p.expires.Store(ps.clock.Now().Add(ps.ttl).UnixNano())
	ps.cache.Add(k, p)
	return p, nil
}
