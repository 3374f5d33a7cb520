package selfhosted

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
)

// fakeMember is a node whose membership the test sets; each set signals a
// change of its Raft state, as a node's Subscribe does.
type fakeMember struct {
	mu                     sync.Mutex
	member, known, stopped bool
	leader                 string
	removedByGroup         bool
	askedGroup             int
	changes                chan struct{}
}

func newFakeMember() *fakeMember { return &fakeMember{known: true, changes: make(chan struct{}, 1)} }

func (f *fakeMember) set(fn func(*fakeMember)) {
	f.mu.Lock()
	fn(f)
	f.mu.Unlock()
	f.changes <- struct{}{}
}

func (f *fakeMember) Membership() (bool, bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.member, f.known, f.stopped
}

func (f *fakeMember) Status() edge.NodeStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return edge.NodeStatus{Status: replica.Status{LeaderID: f.leader}}
}

func (f *fakeMember) RemovedByGroup() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.askedGroup++
	return f.removedByGroup
}

func (f *fakeMember) Subscribe() (<-chan struct{}, func()) { return f.changes, func() {} }

// A node counts as removed once it left a configuration it was in, not
// for starting outside one; at once when it was added at start or Raft
// stopped itself.
func TestRemovalWatchMembership(t *testing.T) {
	t.Parallel()
	n := newFakeMember()
	n.leader = "n1"
	removed := removalWatch(n, false, time.Now)
	require.False(t, removed(), "a node that restarts outside its configuration waits to be in it")
	n.member = true
	require.False(t, removed())
	n.member = false
	require.True(t, removed(), "it left")

	n = newFakeMember()
	n.leader = "n1"
	require.True(t, removalWatch(n, true, time.Now)(), "added at start, and no longer a member")
	n.member, n.known = false, false
	require.False(t, removalWatch(n, true, time.Now)(), "no configuration known yet")
	n.stopped = true
	require.True(t, removalWatch(n, false, time.Now)(), "Raft stopped itself")
}

// A member that knows no leader asks the group's leader about itself only
// once it has known none for longer than an election; a leader seen again
// starts the wait over.
func TestRemovalWatchAsksTheGroupWhenLeaderless(t *testing.T) {
	t.Parallel()
	n := newFakeMember()
	n.member, n.removedByGroup = true, true
	now := time.Unix(1000, 0)
	removed := removalWatch(n, false, func() time.Time { return now })
	require.False(t, removed())
	now = now.Add(askPeersAfter - time.Millisecond)
	require.False(t, removed())
	require.Zero(t, n.askedGroup, "not asked before an election's time")
	n.leader = "n2"
	now = now.Add(time.Hour)
	require.False(t, removed(), "a leader is known")
	n.leader = ""
	require.False(t, removed(), "leaderless again: the wait starts over")
	now = now.Add(askPeersAfter)
	require.True(t, removed())
	require.Equal(t, 1, n.askedGroup)
	n.removedByGroup = false
	require.False(t, removed(), "the group still lists it")
}

// AwaitRemoval looks again at each change of the node's state, and ends
// with false when its context does.
func TestAwaitRemoval(t *testing.T) {
	t.Parallel()
	n := newFakeMember()
	n.leader, n.known = "n1", false // added at start; no configuration known yet
	done := make(chan bool)
	go func() { done <- AwaitRemoval(context.Background(), n, true) }()
	n.set(func(n *fakeMember) { n.known = true }) // a configuration without it
	require.True(t, <-done)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- AwaitRemoval(ctx, newFakeMember(), false) }()
	cancel()
	require.False(t, <-done)
}
