package gossip

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// ErrClosed is returned by Pool methods that need the network after
// Shutdown.
var ErrClosed = errors.New("gossip: pool is shut down")

// Member is one live node as seen through gossip.
type Member struct {
	// Name is the memberlist node name (Config.NodeName).
	Name string
	// Addr is the node's gossip address, "host:port".
	Addr string
	// Meta is the node's decoded metadata.
	Meta Meta
	// Inferred is set only on a Member returned by Pool.Leader that was
	// built from other nodes' reports rather than the leader's own claim:
	// then only Meta (NodeID, HTTPAddr, Term, ShardID) is meaningful, and
	// Name/Addr are filled only if that node is itself in the pool.
	Inferred bool
}

// Pool is this process's handle on the gossip pool. All methods are safe
// for concurrent use.
type Pool struct {
	ml            *memberlist.Memberlist
	keyring       *memberlist.Keyring
	addr          string
	name          string
	updateTimeout time.Duration

	metaMu  sync.RWMutex
	meta    Meta
	metaRaw []byte
	metaGen uint64 // bumped by every accepted UpdateMeta

	// updateMu serializes UpdateNode calls: memberlist reads our meta
	// before it takes the next incarnation number, so two concurrent calls
	// could otherwise send the older meta with the newer incarnation.
	updateMu sync.Mutex
	sentGen  uint64 // metaGen known to be included in a confirmed broadcast

	membersMu sync.RWMutex
	members   map[string]entry

	subsMu  sync.Mutex
	subs    map[int]chan struct{}
	nextSub int

	msgs messages // messages.go

	lifeMu sync.Mutex
	closed atomic.Bool
}

// entry is a member as recorded from memberlist's events. Meta that did
// not decode is kept (ok=false) so a later good update replaces it.
type entry struct {
	addr string
	meta Meta
	ok   bool
}

// New creates the pool, starts listening, and joins cfg.Join if it is not
// empty. Joining succeeds when at least one address answers; if none does,
// New shuts the pool down and returns the error. The first node of a new
// cluster should therefore start with an empty Join (or list only itself),
// and callers that must tolerate peers starting later should start with no
// Join and retry Pool.Join themselves.
func New(cfg Config) (*Pool, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("gossip: NodeName is required")
	}
	raw, err := cfg.Meta.Encode()
	if err != nil {
		return nil, err
	}
	keyring, err := newKeyring(cfg.Keys)
	if err != nil {
		return nil, err
	}

	mc := memberlist.DefaultLANConfig()
	if cfg.Fast {
		applyFast(mc)
	}
	mc.Name = cfg.NodeName
	host, port, err := splitBind(cfg.BindAddr)
	if err != nil {
		return nil, err
	}
	mc.BindAddr, mc.BindPort, mc.AdvertisePort = host, port, port
	if cfg.AdvertiseAddr != "" {
		ah, ap, err := splitAdvertise(cfg.AdvertiseAddr, port)
		if err != nil {
			return nil, err
		}
		mc.AdvertiseAddr, mc.AdvertisePort = ah, ap
	}
	mc.Keyring = keyring
	mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	mc.Logger = newLogger(cfg.LogOutput, cfg.Debug)

	p := &Pool{
		keyring:       keyring,
		name:          cfg.NodeName,
		updateTimeout: cfg.UpdateTimeout,
		meta:          cfg.Meta,
		metaRaw:       raw,
		members:       make(map[string]entry),
		subs:          make(map[int]chan struct{}),
	}
	if p.updateTimeout <= 0 {
		p.updateTimeout = 5 * time.Second
		if cfg.Fast {
			p.updateTimeout = time.Second
		}
	}
	if cfg.Tune != nil {
		cfg.Tune(mc)
	}
	p.msgs.udpSize = mc.UDPBufferSize
	mc.Delegate = (*delegate)(p)
	mc.Events = (*events)(p)

	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("gossip: start on %q: %w", cfg.BindAddr, err)
	}
	p.ml = ml
	// Read once while nothing else runs: memberlist rewrites the local
	// node's fields on every meta update, so reading it later would race.
	p.addr = ml.LocalNode().Address()

	if len(cfg.Join) > 0 {
		if _, err := p.Join(cfg.Join); err != nil {
			_ = ml.Shutdown()
			p.closeSubs()
			return nil, err
		}
	}
	return p, nil
}

// Addr is the address peers gossip with, "host:port", with the real port
// when BindAddr asked for port 0.
func (p *Pool) Addr() string { return p.addr }

// Name is this node's NodeName.
func (p *Pool) Name() string { return p.name }

// Join contacts the given peers and merges state with each. It returns how
// many answered; the error is non-nil only if none did.
func (p *Pool) Join(addrs []string) (int, error) {
	if p.closed.Load() {
		return 0, ErrClosed
	}
	n, err := p.ml.Join(addrs)
	if err != nil {
		return n, fmt.Errorf("gossip: join: %w", flatErr{err})
	}
	return n, nil
}

// flatErr prints memberlist's multi-line multierror (one line per failed
// address) on one line, keeping it unwrappable.
type flatErr struct{ err error }

func (f flatErr) Unwrap() error { return f.err }

func (f flatErr) Error() string {
	var multi interface{ WrappedErrors() []error }
	if !errors.As(f.err, &multi) {
		return f.err.Error()
	}
	parts := make([]string, 0, len(multi.WrappedErrors()))
	for _, e := range multi.WrappedErrors() {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}

// UpdateMeta applies fn to a copy of this node's metadata and, if the
// result is valid and fits, makes it current and broadcasts it, waiting up
// to UpdateTimeout for the broadcast to go out. An invalid or oversize
// result is refused and nothing changes. A timeout error means the new
// metadata is in effect locally and will still reach peers by gossip and
// periodic push/pull, just not confirmed in time. fn runs under the pool's
// metadata lock, so it must not call back into the Pool.
func (p *Pool) UpdateMeta(fn func(*Meta)) error {
	if p.closed.Load() {
		return ErrClosed
	}
	p.metaMu.Lock()
	m := p.meta
	fn(&m)
	raw, err := m.Encode()
	if err != nil {
		p.metaMu.Unlock()
		return err
	}
	if bytes.Equal(raw, p.metaRaw) {
		p.metaMu.Unlock()
		return nil
	}
	p.meta, p.metaRaw = m, raw
	p.metaGen++
	mine := p.metaGen
	p.metaMu.Unlock()

	p.updateMu.Lock()
	defer p.updateMu.Unlock()
	if p.sentGen >= mine {
		// A broadcast that started after our change already carried it:
		// bursts of updates cost one round of gossip, not one each.
		return nil
	}
	p.metaMu.RLock()
	gen := p.metaGen
	p.metaMu.RUnlock()
	if err := p.ml.UpdateNode(p.updateTimeout); err != nil {
		return fmt.Errorf("gossip: meta updated locally, broadcast not confirmed: %w", err)
	}
	p.sentGen = gen
	return nil
}

// Meta returns this node's current metadata.
func (p *Pool) Meta() Meta {
	p.metaMu.RLock()
	defer p.metaMu.RUnlock()
	return p.meta
}

// Local returns this node as a Member, with its current metadata.
func (p *Pool) Local() Member {
	return Member{Name: p.name, Addr: p.addr, Meta: p.Meta()}
}

// Members returns the live members (including this node and nodes merely
// suspected of failure), sorted by Name. Members whose metadata does not
// decode are left out: they cannot be routed to or placed on.
func (p *Pool) Members() []Member {
	p.membersMu.RLock()
	out := make([]Member, 0, len(p.members))
	for name, e := range p.members {
		if e.ok {
			out = append(out, Member{Name: name, Addr: e.addr, Meta: e.meta})
		}
	}
	p.membersMu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NumMembers is the number of live members, including any whose metadata
// did not decode.
func (p *Pool) NumMembers() int {
	p.membersMu.RLock()
	defer p.membersMu.RUnlock()
	return len(p.members)
}

// Subscribe returns a channel that receives a value after any member
// joins, leaves or changes its metadata (this node included), and a
// cancel function. Notifications coalesce: the channel holds at most one,
// so a slow reader sees "something changed" and should re-read Members or
// Leader. The channel is closed by cancel or Shutdown.
func (p *Pool) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	p.subsMu.Lock()
	if p.subs == nil { // already shut down
		p.subsMu.Unlock()
		close(ch)
		return ch, func() {}
	}
	id := p.nextSub
	p.nextSub++
	p.subs[id] = ch
	p.subsMu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			p.subsMu.Lock()
			defer p.subsMu.Unlock()
			if c, ok := p.subs[id]; ok {
				delete(p.subs, id)
				close(c)
			}
		})
	}
}

func (p *Pool) notify() {
	p.subsMu.Lock()
	defer p.subsMu.Unlock()
	for _, ch := range p.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (p *Pool) closeSubs() {
	p.subsMu.Lock()
	defer p.subsMu.Unlock()
	for id, ch := range p.subs {
		delete(p.subs, id)
		close(ch)
	}
	p.subs = nil
}

// Leave tells the pool this node is going away on purpose, so peers drop
// it at once instead of after failure detection, waiting up to timeout
// for the message to go out. Call Shutdown afterwards.
func (p *Pool) Leave(timeout time.Duration) error {
	p.lifeMu.Lock()
	defer p.lifeMu.Unlock()
	if p.closed.Load() {
		return ErrClosed
	}
	if err := p.ml.Leave(timeout); err != nil {
		return fmt.Errorf("gossip: leave: %w", err)
	}
	return nil
}

// Shutdown stops all gossip and closes subscriber channels. Without a
// prior Leave, peers notice through failure detection. Safe to call twice.
func (p *Pool) Shutdown() error {
	p.lifeMu.Lock()
	defer p.lifeMu.Unlock()
	if p.closed.Swap(true) {
		return nil
	}
	err := p.ml.Shutdown()
	p.closeSubs()
	return err
}

// delegate feeds memberlist our metadata.
type delegate Pool

func (d *delegate) NodeMeta(limit int) []byte {
	p := (*Pool)(d)
	p.metaMu.RLock()
	defer p.metaMu.RUnlock()
	if len(p.metaRaw) > limit { // cannot happen: Encode enforces MaxMetaSize
		return nil
	}
	return p.metaRaw
}

func (d *delegate) NotifyMsg(b []byte)                         { (*Pool)(d).receive(b) }
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *delegate) LocalState(join bool) []byte                { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool)     {}

// events mirrors membership into Pool.members. memberlist calls these with
// its node lock held, so they copy what they need, never block and never
// call back into memberlist.
type events Pool

func (e *events) NotifyJoin(n *memberlist.Node)   { e.put(n) }
func (e *events) NotifyUpdate(n *memberlist.Node) { e.put(n) }

func (e *events) NotifyLeave(n *memberlist.Node) {
	p := (*Pool)(e)
	p.membersMu.Lock()
	delete(p.members, n.Name)
	p.membersMu.Unlock()
	p.notify()
}

func (e *events) put(n *memberlist.Node) {
	p := (*Pool)(e)
	m, err := DecodeMeta(n.Meta)
	en := entry{addr: n.Address(), meta: m, ok: err == nil}
	p.membersMu.Lock()
	p.members[n.Name] = en
	p.membersMu.Unlock()
	p.notify()
}
