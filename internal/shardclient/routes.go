package shardclient

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jobbie/jobbie/internal/gossip"
)

var errNoShardAddr = errors.New("shardclient: no address for the shard")

// Route is where requests for one shard cluster go. Every caller of a
// shard shares its route, so a leader change is one store here, seen by
// the next request.
type Route struct {
	id string
	// target is the node requests go to now: gossip's leader, a leader a
	// node named in wire.LeaderHeader, a node that just answered, or else
	// the first known member. Never nil once built.
	target atomic.Pointer[Node]
	// members are the addresses control gave for the shard (the static
	// address, then every registered member), tried in turn when gossip
	// names no leader and the target fails.
	members atomic.Pointer[[]*Node]
	turn    atomic.Uint32
}

// Current is the node requests go to now.
func (rt *Route) Current() *Node { return rt.target.Load() }

// ID is the shard's id ("" for a shard known only by its address).
func (rt *Route) ID() string { return rt.id }

// router keeps each shard's route current: leaders from gossip when the
// process is in the pool, members from what callers pass to Route.
type router struct {
	c *Client

	mu     sync.Mutex
	routes map[string]*Route

	badLeader Node // only its log limiter: one bad-address warning a second

	// unverified holds gossip leader claims whose address refused to
	// prove itself a member of the shard at the TLS handshake: HTTP
	// address → the term claimed. Anyone with the gossip key can claim a
	// leadership; after one failed handshake the claim is not followed
	// again until it changes (another term or address), so a false claim
	// costs one request's retry, not every request's.
	unverified sync.Map

	// changed is closed and replaced whenever some route's target moves,
	// so a request waiting out an election wakes when a leader is known.
	changed atomic.Pointer[chan struct{}]
}

// Route returns shard id's route with its members replaced by primary and
// members (control's answer). An id-less shard is routed by its address.
func (c *Client) Route(id, primary string, members []string) (*Route, error) {
	r := &c.router
	key := id
	if key == "" {
		key = "addr:" + primary
	}
	var list []*Node
	var firstErr error
	for _, a := range append([]string{primary}, members...) {
		if a == "" {
			continue
		}
		n, err := c.nodes.get(a, id)
		if err != nil {
			firstErr = err
			c.cfg.Logger.Error("shardclient: bad shard address", "shard", id, "addr", a, "err", err)
			continue
		}
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	leader := r.gossipLeader(id)
	if len(list) == 0 && leader == nil {
		if firstErr == nil {
			firstErr = errNoShardAddr
		}
		return nil, firstErr
	}
	r.mu.Lock()
	rt, ok := r.routes[key]
	if !ok {
		rt = &Route{id: id}
		r.routes[key] = rt
	}
	r.mu.Unlock()
	rt.members.Store(&list)
	cur := rt.target.Load()
	switch {
	case leader != nil:
		rt.target.Store(leader)
	case cur == nil || !slices.Contains(list, cur):
		rt.target.Store(list[0])
	}
	return rt, nil
}

// gossipLeader is the node of shard id's leader as gossip knows it, or nil.
func (r *router) gossipLeader(id string) *Node {
	if r.c.cfg.Gossip == nil || id == "" {
		return nil
	}
	m, ok := r.c.cfg.Gossip.Leader(id)
	if !ok || m.Meta.HTTPAddr == "" {
		return nil
	}
	if term, ok := r.unverified.Load(m.Meta.HTTPAddr); ok && term.(uint64) == m.Meta.Term {
		return nil
	}
	n, err := r.c.nodes.get(m.Meta.HTTPAddr, id)
	if err != nil {
		if r.badLeader.shouldLog() {
			r.c.cfg.Logger.Warn("shardclient: shard leader advertises an unusable address", "shard", id, "addr", m.Meta.HTTPAddr, "err", err)
		}
		return nil
	}
	return n
}

// refused notes that n, tried for shard id, failed the TLS handshake
// (err): if gossip's leader claim for the shard names n, the claim is not
// followed again (see unverified).
func (r *router) refused(id string, n *Node, err error) {
	if r.c.cfg.Gossip == nil || id == "" || !handshakeRefused(err) {
		return
	}
	m, ok := r.c.cfg.Gossip.Leader(id)
	if !ok || m.Meta.HTTPAddr == "" {
		return
	}
	if claimed, err := r.c.nodes.get(m.Meta.HTTPAddr, id); err != nil || claimed != n {
		return
	}
	if prev, loaded := r.unverified.Swap(m.Meta.HTTPAddr, m.Meta.Term); !loaded || prev.(uint64) != m.Meta.Term {
		r.c.cfg.Logger.Warn("shardclient: not following a leader claim whose address failed the handshake",
			"shard", id, "member", m.Name, "addr", m.Meta.HTTPAddr, "term", m.Meta.Term, "err", err)
	}
}

// run follows gossip until ctx ends, moving routes to new leaders as soon
// as the pool reports a change.
func (r *router) run(ctx context.Context, pool *gossip.Pool) {
	ch, cancel := pool.Subscribe()
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
	routes := make([]*Route, 0, len(r.routes))
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
func (r *router) next(rt *Route, failed *Node, hint string) (n *Node, named bool) {
	if failed.tun != nil && !strings.HasPrefix(hint, tunnelScheme) {
		// A node behind the tunnel names its leader by an address of its
		// own network, which this side cannot reach: only a tunnel
		// address is worth following.
		hint = ""
	}
	if hint != "" {
		if n, err := r.c.nodes.get(hint, rt.id); err == nil {
			rt.target.Store(n)
			return n, n != failed
		}
	}
	if leader := r.gossipLeader(rt.id); leader != nil && leader != failed {
		rt.target.Store(leader)
		return leader, false
	}
	members := *rt.members.Load()
	for range members {
		n := members[int(rt.turn.Add(1))%len(members)]
		if n != failed {
			return n, false
		}
	}
	return failed, false
}

// served records that n answered for the route, so the requests after it
// go there too until gossip says otherwise.
func (rt *Route) served(was, n *Node) {
	if was != n {
		rt.target.CompareAndSwap(was, n)
	}
}

// Owner is the tenant owning rt's shard ("" for a hosted one), as
// Config.ShardOwner says: a caller may hold a tenant's own nodes to a
// share of its own.
func (c *Client) Owner(rt *Route) string {
	if c.cfg.ShardOwner == nil || rt.id == "" {
		return ""
	}
	return c.cfg.ShardOwner(rt.id)
}
