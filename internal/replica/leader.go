package replica

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Raft states as Status reports them (the same words gossip advertises).
const (
	StateLeader    = "leader"
	StateFollower  = "follower"
	StateCandidate = "candidate"
	StateShutdown  = "shutdown"
)

// Status is what a node knows about its group at one moment.
type Status struct {
	NodeID     string `json:"node_id"`
	State      string `json:"state"` // StateLeader, StateFollower, StateCandidate or StateShutdown
	Term       uint64 `json:"term"`
	LeaderID   string `json:"leader_id,omitempty"`   // "" while no leader is known
	LeaderAddr string `json:"leader_raft,omitempty"` // the leader's Raft address
	// Ready is IsLeader: this node leads and has applied every entry of
	// earlier terms, so its reads may decide writes.
	Ready        bool   `json:"ready"`
	AppliedIndex uint64 `json:"applied_index"` // last entry applied to the state
	CommitIndex  uint64 `json:"commit_index"`  // last entry known committed
	LastIndex    uint64 `json:"last_index"`    // last entry in the local log
	// Restores counts snapshots installed into this node's state since it
	// opened: a node that caught up from a snapshot shows one.
	Restores uint64 `json:"restores"`
	// EffectsApplied counts the entries this node applied as a leader's
	// effects (Config.Effects) since it opened: 0 while its group's
	// entries carry commands.
	EffectsApplied uint64 `json:"effects_applied"`
	// RaftApplied is the last entry Raft handed the state machine, of
	// every kind: AppliedIndex counts commands only, and a configuration
	// change or a new leader's no-op after the last command would leave
	// it behind CommitIndex on a member that has caught up.
	RaftApplied uint64 `json:"raft_applied_index"`
	// SinceContactMS is, on a follower that heard from a leader, how many
	// milliseconds ago it last did (Raft's LastContact); absent on the
	// leader and before any contact.
	SinceContactMS *int64 `json:"since_contact_ms,omitempty"`
}

// sameLeadership reports whether two statuses agree on everything a
// subscriber reacts to (indexes move on every write and do not count).
func (s Status) sameLeadership(o Status) bool {
	return s.State == o.State && s.Term == o.Term && s.LeaderID == o.LeaderID &&
		s.LeaderAddr == o.LeaderAddr && s.Ready == o.Ready
}

// leadership tracks this node's view of its group's leader and tells
// subscribers when it changes.
type leadership struct {
	readyTerm   atomic.Uint64 // term in which this node, as leader, passed its barrier
	barrierTerm atomic.Uint64 // term whose barrier was started
	bg          sync.WaitGroup

	mu   sync.Mutex
	last Status
	subs map[int]chan struct{}
	next int
}

func (l *leadership) init() { l.subs = map[int]chan struct{}{} }

// publish records st and nudges subscribers if leadership changed.
func (l *leadership) publish(st Status) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st.sameLeadership(l.last) {
		return false
	}
	l.last = st
	for _, ch := range l.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return true
}

// Subscribe returns a channel that receives a value whenever this node's
// state, term, known leader or readiness changes, and a cancel function.
// Notifications coalesce (the channel holds one): read Status afterwards.
// The channel is closed by cancel; after Close it just stops receiving.
func (n *Node) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l := &n.lead
	l.mu.Lock()
	id := l.next
	l.next++
	l.subs[id] = ch
	l.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.subs, id)
			l.mu.Unlock()
			close(ch)
		})
	}
}

// Status reports this node's state, term, leader and indexes.
func (n *Node) Status() Status {
	addr, id := n.raft.LeaderWithID()
	st := Status{
		NodeID: n.cfg.NodeID, State: stateName(n.raft.State()), Term: n.raft.CurrentTerm(),
		LeaderID: string(id), LeaderAddr: string(addr),
		AppliedIndex: n.fsm.applied.Load(), RaftApplied: n.raft.AppliedIndex(), CommitIndex: n.raft.CommitIndex(), LastIndex: n.raft.LastIndex(),
		Restores: n.fsm.restores.Load(), EffectsApplied: n.fsm.effectsApplied.Load(),
	}
	st.Ready = st.State == StateLeader && n.lead.readyTerm.Load() == st.Term
	if t := n.LastContact(); !t.IsZero() {
		ms := time.Since(t).Milliseconds()
		st.SinceContactMS = &ms
	}
	return st
}

// State is this node's Raft state: StateLeader, StateFollower,
// StateCandidate or StateShutdown. Unlike IsLeader it says "leader" from
// the moment of election, which is what decides where proposals go.
func (n *Node) State() string { return stateName(n.raft.State()) }

// Term is the current Raft term.
func (n *Node) Term() uint64 { return n.raft.CurrentTerm() }

// LeaderID is the id of the leader this node knows, or "".
func (n *Node) LeaderID() string {
	_, id := n.raft.LeaderWithID()
	return string(id)
}

// LeaderAddr is the Raft address of the leader this node knows, or "".
func (n *Node) LeaderAddr() string {
	addr, _ := n.raft.LeaderWithID()
	return string(addr)
}

// IsLeader reports whether this node leads and has applied every entry
// committed before its term (its barrier passed). Leader-only loops check
// it: a freshly elected leader does not act on state that is still
// catching up, and a deposed one stops at its next check.
func (n *Node) IsLeader() bool {
	return n.raft.State() == raft.Leader && n.lead.readyTerm.Load() == n.raft.CurrentTerm()
}

// LeaderCh delivers true when this node becomes leader and false when it
// stops. It is Raft's own channel and has one reader; prefer Subscribe.
func (n *Node) LeaderCh() <-chan bool { return n.raft.LeaderCh() }

// WaitLeader blocks until this node is the leader and has applied its log
// (IsLeader), or ctx ends.
func (n *Node) WaitLeader(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if n.raft.State() == raft.Leader {
			term := n.raft.CurrentTerm()
			// A new leader must apply everything committed before it serves
			// reads that decide writes; the barrier does that.
			if err := n.raft.Barrier(5 * time.Second).Error(); err != nil {
				return err
			}
			n.markReady(term)
			if n.IsLeader() {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// WaitApplied blocks until the state has applied index, or ctx ends. A
// follower uses it to serve a read after a write it forwarded.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		ch := n.fsm.appliedWait()
		if n.fsm.applied.Load() >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stop:
			return ErrClosed
		}
	}
}

func (n *Node) markReady(term uint64) {
	if n.raft.State() == raft.Leader && n.raft.CurrentTerm() == term {
		n.lead.readyTerm.Store(term)
	}
	n.refreshLeadership()
}

// watchLeadership follows Raft's state and leader observations, starts
// the barrier of each term this node wins, and keeps Status subscribers
// and the leader gauge current. Observations are dropped when the channel
// is full, so a slow tick re-reads the state as well.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	obsCh := make(chan raft.Observation, 16)
	o := raft.NewObserver(obsCh, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.RaftState, raft.LeaderObservation, raft.PeerObservation:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(o)
	defer n.raft.DeregisterObserver(o)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		n.refreshLeadership()
		select {
		case <-n.stop:
			return
		case <-obsCh:
		case <-t.C:
		}
	}
}

func (n *Node) refreshLeadership() {
	st := n.Status()
	if st.State == StateLeader && !st.Ready && n.lead.barrierTerm.Swap(st.Term) != st.Term {
		n.lead.bg.Add(1)
		go func(term uint64) {
			defer n.lead.bg.Done()
			if n.raft.Barrier(10*time.Second).Error() == nil {
				n.markReady(term)
				return
			}
			n.lead.barrierTerm.CompareAndSwap(term, 0) // the next refresh tries again

		}(st.Term)
	}
	if n.lead.publish(st) {
		v := 0.0
		if st.Ready {
			v = 1
		}
		isLeader.WithLabelValues(n.cfg.Name).Set(v)
	}
}

func stateName(s raft.RaftState) string {
	switch s {
	case raft.Leader:
		return StateLeader
	case raft.Follower:
		return StateFollower
	case raft.Candidate:
		return StateCandidate
	}
	return StateShutdown
}
