package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/shard/api"
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
	})
	if err != nil && !errors.Is(err, gossip.ErrClosed) {
		n.cfg.Logger.Debug("shard: gossip metadata", "err", err)
	}
	return true
}

// JoinCluster asks the group to add this node as a voter, and retries
// until a member accepts or ctx ends. It asks the leader gossip knows
// first, then any other member of the shard in the pool, then hints
// (HTTP "host:port" of members, e.g. from --join-http): any member will
// do, since membership changes are forwarded to the leader. A node that
// opened with Raft state is already a member and need not call it.
func (n *Node) JoinCluster(ctx context.Context, hints []string) error {
	body, _ := json.Marshal(api.AddMemberRequest{NodeID: n.cfg.NodeID, RaftAddr: n.repl.RaftAddr()})
	var last error
	for {
		if n.repl.LeaderID() != "" {
			return nil // a leader talks to us: someone added us already
		}
		for _, addr := range n.joinTargets(hints) {
			if last = n.askToJoin(addr, body); last == nil {
				return nil
			}
		}
		if last == nil {
			last = errors.New("no member of the shard is known yet")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shard: join shard %s: %w (last: %v)", n.cfg.ShardID, ctx.Err(), last)
		case <-time.After(500 * time.Millisecond): // pacing network attempts: the wall clock
		}
	}
}

func (n *Node) joinTargets(hints []string) []string {
	var out []string
	seen := map[string]bool{n.api.AdvertisedHTTP(): true}
	add := func(a string) {
		a = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(a, "http://"), "https://"), "/")
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	if p := n.cfg.Gossip; p != nil {
		if m, ok := p.Leader(n.cfg.ShardID); ok {
			add(m.Meta.HTTPAddr)
		}
		for _, m := range p.Members() {
			if m.Meta.Role == gossip.RoleShard && m.Meta.ShardID == n.cfg.ShardID {
				add(m.Meta.HTTPAddr)
			}
		}
	}
	for _, h := range hints {
		add(h)
	}
	return out
}

// askToJoin posts this node's membership request to a member, which
// forwards it to its leader.
func (n *Node) askToJoin(addr string, body []byte) error {
	_, err := n.callMembers(addr, body, 15*time.Second)
	return err
}

// RemovedByGroup asks the group's leader, found among this shard's
// members in gossip, whether its configuration still lists this node.
// Raft does not always tell a member it removed: the leader stops
// replicating to it at once, and the entry that removes it may never be
// sent. A node that has lost its leader asks instead. Only the leader's
// answer counts: a lagging follower may not know of a recent add.
func (n *Node) RemovedByGroup() bool {
	if n.cfg.Gossip == nil {
		return false
	}
	for _, m := range n.cfg.Gossip.Members() {
		if m.Meta.Role != gossip.RoleShard || m.Meta.ShardID != n.cfg.ShardID || m.Meta.NodeID == n.cfg.NodeID || m.Meta.HTTPAddr == "" {
			continue
		}
		list, err := n.callMembers(m.Meta.HTTPAddr, nil, 2*time.Second)
		if err != nil || list.LeaderID != m.Meta.NodeID {
			continue // not the leader, or it did not answer
		}
		return !slices.ContainsFunc(list.Members, func(v wire.Member) bool { return v.NodeID == n.cfg.NodeID })
	}
	return false
}

// callMembers calls /internal/v1/members on the member at addr, a GET or,
// with a body, a POST (an add), and returns the member list it answers.
func (n *Node) callMembers(addr string, body []byte, wait time.Duration) (wire.MemberList, error) {
	var list wire.MemberList
	node, err := n.shards.Node(addr)
	if err != nil {
		return list, err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/internal/v1/members")
	if body != nil {
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	if err := node.Do(req, resp, time.Now().Add(wait)); err != nil { // a network deadline: the wall clock
		return list, err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		var b wire.ErrorBody
		if json.Unmarshal(resp.Body(), &b) == nil && b.Error != nil {
			return list, fmt.Errorf("%s: %d %s", addr, resp.StatusCode(), b.Error.Message)
		}
		return list, fmt.Errorf("%s: status %d", addr, resp.StatusCode())
	}
	if err := json.Unmarshal(resp.Body(), &list); err != nil {
		return list, fmt.Errorf("%s: member list: %w", addr, err)
	}
	return list, nil
}
