package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// ErrUnknownMember is returned by RemoveServer for an id not in the group.
var ErrUnknownMember = errors.New("replica: no such member")

// ErrMemberConflict is returned by AddVoter when another member already
// uses the address, or when a change would leave the group without voters.
var ErrMemberConflict = errors.New("replica: membership conflict")

// Member is one server of the group's latest Raft configuration.
type Member struct {
	ID     string `json:"node_id"`
	Addr   string `json:"raft_addr"`
	Voter  bool   `json:"voter"`
	Leader bool   `json:"leader"`
}

// Members lists the group's latest configuration, as this node knows it
// (a follower may be a moment behind a change).
func (n *Node) Members() ([]Member, error) {
	servers, err := n.servers()
	if err != nil {
		return nil, err
	}
	leader := n.LeaderID()
	out := make([]Member, 0, len(servers))
	for _, s := range servers {
		out = append(out, Member{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter,
			Leader: string(s.ID) == leader})
	}
	return out, nil
}

// Membership reports whether this node is a member of the latest
// configuration it knows (known is false while it knows none, as a node
// waiting to be added), and whether Raft stopped itself, which a leader
// does when it applies its own removal (as opposed to Close).
func (n *Node) Membership() (member, known, stopped bool) {
	n.mu.Lock()
	closed := n.closed
	n.mu.Unlock()
	if n.raft.State() == raft.Shutdown {
		return false, true, !closed
	}
	servers, err := n.servers()
	if err != nil || len(servers) == 0 {
		return false, false, false
	}
	for _, s := range servers {
		if string(s.ID) == n.cfg.NodeID {
			return true, true, false
		}
	}
	return false, true, false
}

func (n *Node) servers() ([]raft.Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("replica: read configuration: %w", err)
	}
	return f.Configuration().Servers, nil
}

// AddVoter makes id, reachable at Raft address addr, a voting member; the
// leader then streams it the log, or a snapshot if the log it needs was
// compacted away. Adding a member that is already a voter at that address
// changes nothing, so a node may ask again after a restart. Only the
// leader can do it (ErrNotLeader elsewhere).
func (n *Node) AddVoter(ctx context.Context, id, addr string) error {
	if n.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	servers, err := n.servers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		switch {
		case string(s.ID) == id && string(s.Address) == addr && s.Suffrage == raft.Voter:
			return nil
		case string(s.ID) != id && string(s.Address) == addr:
			return fmt.Errorf("%w: %s already uses raft address %s", ErrMemberConflict, s.ID, addr)
		}
	}
	return n.waitIndex(ctx, n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, timeoutOf(ctx)))
}

// RemoveServer removes id from the group. A leader removing itself steps
// down once the change commits. Only the leader can do it.
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	if n.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	servers, err := n.servers()
	if err != nil {
		return err
	}
	found, voters := false, 0
	for _, s := range servers {
		if string(s.ID) == id {
			found = true
		} else if s.Suffrage == raft.Voter {
			voters++
		}
	}
	if !found {
		return fmt.Errorf("%w: %s", ErrUnknownMember, id)
	}
	if voters == 0 {
		return fmt.Errorf("%w: %s is the last voter", ErrMemberConflict, id)
	}
	return n.waitIndex(ctx, n.raft.RemoveServer(raft.ServerID(id), 0, timeoutOf(ctx)))
}

func (n *Node) waitIndex(ctx context.Context, f raft.IndexFuture) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return raftError(err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// raftError maps Raft's leadership errors onto this package's sentinels.
func raftError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrLeadershipLost
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	}
	return err
}

// timeoutOf is how long Raft may wait to enqueue a change: the context's
// deadline, or 10s without one.
func timeoutOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left > 0 {
			return left
		}
		return time.Millisecond
	}
	return 10 * time.Second
}

// TransferLeadership hands the lead to the most up-to-date follower and
// waits until it took over, so a leader stopping on purpose does not leave
// its group to wait out an election timeout. It does nothing on a
// follower or in a group of one.
func (n *Node) TransferLeadership() error {
	if n.raft.State() != raft.Leader {
		return nil
	}
	servers, err := n.servers()
	if err != nil {
		return err
	}
	others := 0
	for _, s := range servers {
		if s.Suffrage == raft.Voter && string(s.ID) != n.cfg.NodeID {
			others++
		}
	}
	if others == 0 {
		return nil
	}
	return raftError(n.raft.LeadershipTransfer().Error())
}
