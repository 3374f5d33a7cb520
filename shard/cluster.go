package shard

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/wire"
)

// metaLoop keeps this node's gossip metadata current.
type metaLoop struct {
	stop chan struct{}
	done chan struct{} // closed when the loop has returned
	// mu is held while the loop reads the node, and stopped set under it,
	// so the node may close once stopMeta returns even if the loop is
	// still waiting on a gossip broadcast.
	mu      sync.Mutex
	stopped bool
}

// formats is the newest Raft entry format each member of this shard last
// advertised in gossip (gossip.Meta.EntryFormat). A member that left the
// pool keeps its entry: it comes back with the same build or says
// otherwise, and a leader must not flip between entry kinds whenever a
// member restarts.
type formats struct {
	mu sync.RWMutex
	of map[string]int // node id → entry format
}

// effectsReader is the replica's EffectsReader: whether a member is known
// to apply effects entries; nil without gossip (every member is taken to
// run this build).
func (n *Node) effectsReader() func(string) bool {
	if n.cfg.Gossip == nil {
		return nil
	}
	return func(id string) bool {
		n.formats.mu.RLock()
		defer n.formats.mu.RUnlock()
		return n.formats.of[id] >= replica.EntryFormat
	}
}

// noteFormats records what gossip shows of this shard's members' entry
// formats.
func (n *Node) noteFormats() {
	members := n.cfg.Gossip.Members()
	n.formats.mu.Lock()
	defer n.formats.mu.Unlock()
	if n.formats.of == nil {
		n.formats.of = make(map[string]int)
	}
	for _, m := range members {
		if m.Meta.Role == gossip.RoleShard && m.Meta.ShardID == n.cfg.ShardID && m.Meta.NodeID != "" {
			n.formats.of[m.Meta.NodeID] = m.Meta.EntryFormat
		}
	}
}

// metaRefresh is how often the advertised load is refreshed when nothing
// else changes.
const metaRefresh = 5 * time.Second

// startMeta starts keeping this node's gossip metadata current.
func (n *Node) startMeta() {
	if n.cfg.Gossip == nil {
		return
	}
	n.meta.stop, n.meta.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(n.meta.done)
		n.keepMeta()
	}()
}

// waitMeta waits for the metadata loop to return: a broadcast it was
// waiting on ends within the pool's UpdateTimeout. Stop calls it last, so
// that wait overlaps the rest of the shutdown.
func (n *Node) waitMeta() {
	if n.meta.done != nil {
		<-n.meta.done
	}
}

// stopMeta hands the lead to another member if this node leads and stops
// the metadata loop's use of the node; the pool belongs to the caller.
func (n *Node) stopMeta() {
	if err := n.repl.TransferLeadership(); err != nil {
		n.cfg.Logger.Warn("shard: leadership transfer before stopping", "err", err)
	}
	if n.meta.stop == nil {
		return
	}
	n.meta.mu.Lock()
	defer n.meta.mu.Unlock()
	if !n.meta.stopped {
		n.meta.stopped = true
		close(n.meta.stop)
	}
}

// keepMeta republishes this node's metadata whenever its leadership view
// changes (election, new term, leader learnt) or the pool changes (the
// leader's HTTP address may just have arrived).
func (n *Node) keepMeta() {
	lead, cancelLead := n.repl.Subscribe()
	defer cancelLead()
	peers, cancelPeers := n.cfg.Gossip.Subscribe()
	defer cancelPeers()
	t := n.cfg.Clock.NewTicker(metaRefresh)
	defer t.Stop()
	for n.publishMeta() {
		n.noteFormats()
		select {
		case <-n.meta.stop:
			return
		case <-lead:
		case <-t.Chan():
		case _, ok := <-peers:
			if !ok {
				return
			}
		}
	}
}

// publishMeta advertises this node's current view; false once stopped.
func (n *Node) publishMeta() bool {
	n.meta.mu.Lock()
	if n.meta.stopped {
		n.meta.mu.Unlock()
		return false
	}
	st := n.repl.Status()
	leaderHTTP := ""
	if st.LeaderID != "" {
		leaderHTTP, _ = n.api.LeaderHTTP()
	}
	load := int64(len(engine.Namespaces(n.repl.DB())))
	n.meta.mu.Unlock()
	// This waits for the broadcast (up to the pool's UpdateTimeout) and
	// touches only the pool.
	err := n.cfg.Gossip.UpdateMeta(func(m *gossip.Meta) {
		m.Role, m.ShardID, m.NodeID = gossip.RoleShard, n.cfg.ShardID, n.cfg.NodeID
		m.RaftState, m.Term = gossip.NormalizeRaftState(st.State), st.Term
		m.Leader, m.LeaderHTTP = st.LeaderID, leaderHTTP
		m.HTTPAddr, m.RaftAddr, m.Version, m.Load = n.api.AdvertisedHTTP(), n.repl.RaftAddr(), n.cfg.Version, load
		m.EntryFormat = replica.EntryFormat
	})
	if err != nil && !errors.Is(err, gossip.ErrClosed) {
		n.cfg.Logger.Debug("shard: gossip metadata", "err", err)
	}
	return true
}

// JoinCluster asks the group to add this node as a voter, and retries
// until a member accepts or ctx ends (edge.Group.Join). It asks the
// leader gossip knows first, then any other member of the shard in the
// pool, then hints (HTTP "host:port" of members, e.g. from --join-http).
// A node that opened with Raft state is already a member and need not
// call it.
func (n *Node) JoinCluster(ctx context.Context, hints []string) error {
	r := wire.AddMemberRequest{NodeID: n.cfg.NodeID, RaftAddr: n.repl.RaftAddr()}
	return n.api.Group().Join(ctx, r, func() []string { return n.joinTargets(hints) })
}

func (n *Node) joinTargets(hints []string) []string {
	var out []string
	if p := n.cfg.Gossip; p != nil {
		if m, ok := p.Leader(n.cfg.ShardID); ok {
			out = append(out, m.Meta.HTTPAddr)
		}
		for _, m := range p.Members() {
			if m.Meta.Role == gossip.RoleShard && m.Meta.ShardID == n.cfg.ShardID {
				out = append(out, m.Meta.HTTPAddr)
			}
		}
	}
	return append(out, hints...)
}

// RemovedByGroup asks the group's leader, found among this shard's
// members in gossip, whether its configuration still lists this node
// (edge.Group.Removed).
func (n *Node) RemovedByGroup() bool {
	if n.cfg.Gossip == nil {
		return false
	}
	var peers []edge.Peer
	for _, m := range n.cfg.Gossip.Members() {
		if m.Meta.Role == gossip.RoleShard && m.Meta.ShardID == n.cfg.ShardID {
			peers = append(peers, edge.Peer{NodeID: m.Meta.NodeID, HTTPAddr: m.Meta.HTTPAddr})
		}
	}
	return n.api.Group().Removed(peers)
}
