package gateway

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jobbie/jobbie/internal/gossip"
)

// LeaderHeader is how a shard node that is not the leader may name the
// one that is, on a 503 no_leader (or 421) answer to a request it did not
// apply: the gateway sends the request there at once instead of waiting
// for gossip to tell it.
const LeaderHeader = "X-Jobbie-Leader"

var errNoShardAddr = errors.New("gateway: control gave no address for the shard")

// shardRoute is where requests for one shard cluster go. Placements of
// every namespace on the shard share it, so a leader change is one store
// here, seen by the next request of each namespace.
type shardRoute struct {
	id string
	// target is the node requests go to now: gossip's leader, a leader a
	// node named in LeaderHeader, a node that just answered, or else the
	// first known member. Read once per request; never nil once built.
	target atomic.Pointer[shardClient]
	// members are the addresses control gave for the shard (the static
	// address, then every registered member), tried in turn when gossip
	// names no leader and the target fails.
	members atomic.Pointer[[]*shardClient]
	turn    atomic.Uint32
}

// current is the node to send a request to.
func (rt *shardRoute) current() *shardClient { return rt.target.Load() }

// router keeps each shard's route current: leaders from gossip when the
// gateway is in the pool, members from control's placement answers.
type router struct {
	pool   *gossip.Pool // nil: no gossip, routes stay on control's addresses
	shards *shardPool
	log    *slog.Logger

	mu     sync.Mutex
	routes map[string]*shardRoute

	badLeader shardClient // only its log limiter: one bad-address warning a second

	// changed is closed and replaced whenever some route's target moves,
	// so a request waiting out an election wakes when a leader is known.
	changed atomic.Pointer[chan struct{}]
}

func newRouter(pool *gossip.Pool, shards *shardPool, log *slog.Logger) *router {
	r := &router{pool: pool, shards: shards, log: log, routes: map[string]*shardRoute{}}
	ch := make(chan struct{})
	r.changed.Store(&ch)
	return r
}

// route returns shard id's route with its member list replaced by primary
// and members (control's answer). An id-less answer (an old control) is
// routed by its address alone.
func (r *router) route(id, primary string, members []string) (*shardRoute, error) {
	key := id
	if key == "" {
		key = "addr:" + primary
	}
	var clients []*shardClient
	var firstErr error
	for _, a := range append([]string{primary}, members...) {
		if a == "" {
			continue
		}
		sc, err := r.shards.get(a)
		if err != nil {
			firstErr = err
			r.log.Error("gateway: bad shard address from control", "shard", id, "addr", a, "err", err)
			continue
		}
		if !slices.Contains(clients, sc) {
			clients = append(clients, sc)
		}
	}
	leader := r.gossipLeader(id)
	if len(clients) == 0 && leader == nil {
		if firstErr == nil {
			firstErr = errNoShardAddr
		}
		return nil, firstErr
	}
	r.mu.Lock()
	rt, ok := r.routes[key]
	if !ok {
		rt = &shardRoute{id: id}
		r.routes[key] = rt
	}
	r.mu.Unlock()
	rt.members.Store(&clients)
	cur := rt.target.Load()
	switch {
	case leader != nil:
		rt.target.Store(leader)
	case cur == nil || !slices.Contains(clients, cur):
		rt.target.Store(clients[0])
	}
	return rt, nil
}

// gossipLeader is the client for shard id's leader as gossip knows it, or
// nil.
func (r *router) gossipLeader(id string) *shardClient {
	if r.pool == nil || id == "" {
		return nil
	}
	m, ok := r.pool.Leader(id)
	if !ok || m.Meta.HTTPAddr == "" {
		return nil
	}
	sc, err := r.shards.get(m.Meta.HTTPAddr)
	if err != nil {
		if r.badLeader.shouldLog() {
			r.log.Warn("gateway: shard leader advertises an unusable address", "shard", id, "addr", m.Meta.HTTPAddr, "err", err)
		}
		return nil
	}
	return sc
}

// run follows gossip until ctx ends, moving routes to new leaders as soon
// as the pool reports a change.
func (r *router) run(ctx context.Context) {
	if r.pool == nil {
		return
	}
	ch, cancel := r.pool.Subscribe()
	defer cancel()
	for {
		r.refresh()
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return // the pool shut down
			}
		}
	}
}

// refresh points every route at the leader gossip knows for it. A shard
// gossip knows no leader for keeps its target: during an election there
// is nobody better, and retries walk the members.
func (r *router) refresh() {
	r.mu.Lock()
	routes := make([]*shardRoute, 0, len(r.routes))
	for _, rt := range r.routes {
		routes = append(routes, rt)
	}
	r.mu.Unlock()
	moved := false
	for _, rt := range routes {
		if leader := r.gossipLeader(rt.id); leader != nil && rt.target.Swap(leader) != leader {
			moved = true
		}
	}
	if moved {
		r.notify()
	}
}

func (r *router) notify() {
	ch := make(chan struct{})
	old := r.changed.Swap(&ch)
	close(*old)
}

// next picks where to try again after failed did not serve a request:
// the leader failed named (hint), when usable, and then named is true;
// otherwise gossip's leader, if it is another node, or else the next
// member in turn.
func (r *router) next(rt *shardRoute, failed *shardClient, hint string) (sc *shardClient, named bool) {
	if hint != "" {
		if sc, err := r.shards.get(hint); err == nil {
			rt.target.Store(sc)
			return sc, sc != failed
		}
	}
	if leader := r.gossipLeader(rt.id); leader != nil && leader != failed {
		rt.target.Store(leader)
		return leader, false
	}
	members := *rt.members.Load()
	for range members {
		sc := members[int(rt.turn.Add(1))%len(members)]
		if sc != failed {
			return sc, false
		}
	}
	return failed, false
}

// served records that sc answered for the route, so the requests after it
// go there too until gossip says otherwise.
func (rt *shardRoute) served(was, sc *shardClient) {
	if was != sc {
		rt.target.CompareAndSwap(was, sc)
	}
}
