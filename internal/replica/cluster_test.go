package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// cluster is an in-process Raft group on loopback with tight timings.
type cluster struct {
	t     *testing.T
	base  string
	nodes map[string]*Node
	dirs  map[string]string
	addrs map[string]string // a restarted node keeps its Raft address
	opts  func(*Config)
	reg   func(id string) *Registry // the state machine of each node; default a counter
}

func newCluster(t *testing.T, size int, opts func(*Config)) *cluster {
	t.Helper()
	return newClusterOf(t, size, opts, nil)
}

// newClusterOf is newCluster with reg making each node's state machine.
func newClusterOf(t *testing.T, size int, opts func(*Config), reg func(id string) *Registry) *cluster {
	t.Helper()
	// The directory first: cleanups run last-registered first, and the
	// nodes must close before their files go.
	c := &cluster{t: t, base: t.TempDir(), nodes: map[string]*Node{}, dirs: map[string]string{}, addrs: map[string]string{}, opts: opts, reg: reg}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			_ = n.Close()
		}
	})
	first := c.open("n1", true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, first.WaitLeader(ctx))
	for i := 2; i <= size; i++ {
		c.join(ctxT(t), nodeName(i))
	}
	return c
}

func nodeName(i int) string { return "n" + string(rune('0'+i)) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// open starts node id on its directory (kept across restarts).
func (c *cluster) open(id string, bootstrap bool) *Node {
	c.t.Helper()
	dir, ok := c.dirs[id]
	if !ok {
		dir = filepath.Join(c.base, id)
		c.dirs[id] = dir
	}
	if c.addrs[id] == "" {
		c.addrs[id] = raftPort(c.t)
	}
	cfg := Config{Dir: dir, NodeID: id, RaftAddr: c.addrs[id], Bootstrap: bootstrap, HeartbeatTimeout: 200 * time.Millisecond,
		ElectionTimeout: 200 * time.Millisecond, CacheSize: 8 << 20, Logger: hclog.NewNullLogger()}
	if c.opts != nil {
		c.opts(&cfg)
	}
	reg := (&counter{}).registry
	if c.reg != nil {
		reg = func() *Registry { return c.reg(id) }
	}
	n, err := Open(cfg, reg())
	require.NoError(c.t, err)
	c.nodes[id] = n
	c.addrs[id] = n.RaftAddr()
	return n
}

// raftPort picks a node's Raft address, kept across its restarts: a
// free port below Linux's ephemeral range (32768 and up), as
// e2e/internal/freeport does. A port the kernel handed out (":0") could
// be taken while the node is down, by any outgoing connection on the
// machine as its source port or a parallel test's listener, and the
// restart then failed ("address already in use").
func raftPort(t *testing.T) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(11000))
		if portsGiven[addr] {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		_ = l.Close()
		portsGiven[addr] = true
		return addr
	}
	t.Fatal("no free port on 127.0.0.1 between 10000 and 21000")
	return ""
}

var (
	portsMu    sync.Mutex
	portsGiven = map[string]bool{} // never handed out twice by this process
)

// join opens a fresh node and has the leader add it as a voter.
func (c *cluster) join(ctx context.Context, id string) *Node {
	c.t.Helper()
	n := c.open(id, false)
	require.False(c.t, n.HasState())
	require.NoError(c.t, c.leader().AddVoter(ctx, id, n.RaftAddr()))
	return n
}

// leader waits for one node to be IsLeader and returns it.
func (c *cluster) leader() *Node {
	c.t.Helper()
	var out *Node
	require.Eventually(c.t, func() bool {
		for _, n := range c.nodes {
			if n.IsLeader() {
				out = n
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no leader")
	return out
}

func (c *cluster) stop(id string) {
	require.NoError(c.t, c.nodes[id].Close())
	delete(c.nodes, id)
}

// add proposes v on the leader and returns the new total; adds are made
// one at a time.
func (c *cluster) add(v byte) uint64 {
	c.t.Helper()
	for {
		leader := c.leader()
		before := readN(leader) // a ready leader applied every add before
		res, err := leader.Propose(context.Background(), Command(cmdAdd, []byte{v}))
		switch {
		case errors.Is(err, ErrNotLeader):
			continue // lost the lead between the check and the proposal
		case errors.Is(err, ErrLeadershipLost):
			// Lost the lead while it replicated (an election on a loaded
			// machine): the add was committed or dropped for good once a
			// new leader is ready, which has then applied it or never will.
			if n := readN(c.leader()); n != before {
				require.Equal(c.t, before+uint64(v), n)
				return n
			}
			continue
		}
		require.NoError(c.t, err)
		return res.(uint64)
	}
}

// converged waits until every node's state holds want.
func (c *cluster) converged(want uint64) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		for _, n := range c.nodes {
			if readN(n) != want {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond)
}

func readN(n *Node) uint64 {
	v, closer, err := n.DB().Get([]byte("n"))
	if err != nil {
		return 0
	}
	defer closer.Close()
	return binary.BigEndian.Uint64(v)
}

func TestClusterReplicatesAndFailsOver(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, nil)
	leader := c.leader()
	ms, err := leader.Members()
	require.NoError(t, err)
	require.Len(t, ms, 3)
	for i := 0; i < 20; i++ {
		c.add(1)
	}
	c.converged(20)

	// A follower refuses proposals and knows who leads.
	for id, n := range c.nodes {
		if n == leader {
			continue
		}
		_, err := n.Propose(context.Background(), Command(cmdAdd, []byte{1}))
		require.ErrorIs(t, err, ErrNotLeader)
		st := n.Status()
		require.Equal(t, StateFollower, st.State, id)
		require.Equal(t, leader.Status().NodeID, st.LeaderID)
		require.Equal(t, leader.RaftAddr(), st.LeaderAddr)
		require.False(t, n.IsLeader())
	}

	// Subscribers hear of the change when the leader goes.
	var follower *Node
	for _, n := range c.nodes {
		if n != leader {
			follower = n
			break
		}
	}
	ch, cancel := follower.Subscribe()
	defer cancel()
	oldTerm := follower.Term()
	start := time.Now()
	c.stop(leader.Status().NodeID)
	next := c.leader()
	t.Logf("new leader %s after %v", next.Status().NodeID, time.Since(start))
	require.Greater(t, next.Term(), oldTerm)
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no leadership notification")
	}
	require.Equal(t, uint64(21), c.add(1), "writes go on with two of three")
	c.converged(21)
}

func TestClusterSnapshotCatchUpAndRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2, func(cfg *Config) { cfg.TrailingLogs = 4; cfg.SnapshotThreshold = 1 << 30 })
	for i := 0; i < 50; i++ {
		c.add(2)
	}
	leader := c.leader()
	require.NoError(t, leader.Snapshot())
	first := leader.Status().LastIndex
	fi, err := leader.logs.FirstIndex()
	require.NoError(t, err)
	require.Greater(t, fi, first-10, "the log was compacted behind the snapshot")

	// A fresh node cannot be sent entries that are gone: it gets the
	// checkpoint, then the log after it.
	n3 := c.join(ctxT(t), "n3")
	c.add(1)
	c.converged(101)
	require.EqualValues(t, 1, n3.Status().Restores, "caught up from a snapshot")
	require.GreaterOrEqual(t, n3.AppliedIndex(), first)

	// Restarted, it resumes from its own state: no snapshot restored again,
	// nothing applied twice.
	c.stop("n3")
	n3 = c.open("n3", false)
	require.True(t, n3.HasState())
	require.Zero(t, n3.Status().Restores)
	require.Equal(t, uint64(101), readN(n3))
	c.add(1)
	c.converged(102)
}

func TestClusterMembership(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, nil)
	leader := c.leader()
	ctx := ctxT(t)
	var victim string
	for id, n := range c.nodes {
		if n != leader {
			victim = id
		}
	}
	require.NoError(t, leader.AddVoter(ctx, victim, c.nodes[victim].RaftAddr()), "adding a member again changes nothing")
	require.ErrorIs(t, leader.AddVoter(ctx, "other", c.nodes[victim].RaftAddr()), ErrMemberConflict)
	require.ErrorIs(t, c.nodes[victim].AddVoter(ctx, "x", "127.0.0.1:1"), ErrNotLeader)
	require.ErrorIs(t, leader.RemoveServer(ctx, "nobody"), ErrUnknownMember)

	require.Eventually(t, func() bool {
		member, known, stopped := c.nodes[victim].Membership()
		return member && known && !stopped
	}, 5*time.Second, 10*time.Millisecond, "a follower sees itself in the configuration")
	require.NoError(t, leader.RemoveServer(ctx, victim))
	require.Eventually(t, func() bool {
		member, known, stopped := c.nodes[victim].Membership()
		return !member && known && !stopped
	}, 5*time.Second, 10*time.Millisecond, "the removed follower sees itself left out")
	ms, err := leader.Members()
	require.NoError(t, err)
	require.Len(t, ms, 2)
	for _, m := range ms {
		require.NotEqual(t, victim, m.ID)
		require.True(t, m.Voter)
		require.Equal(t, m.ID == leader.Status().NodeID, m.Leader)
	}
	c.stop(victim)
	c.add(3)
	c.converged(3)

	// A leader that removes itself stops its Raft; the other one leads.
	// On a loaded machine the lead may have moved since the start: the
	// node that leads when asked removes itself.
	var leaderID string
	require.Eventually(t, func() bool {
		leader = c.leader()
		leaderID = leader.Status().NodeID
		err := leader.RemoveServer(ctx, leaderID)
		if errors.Is(err, ErrNotLeader) {
			return false
		}
		require.NoError(t, err)
		return true
	}, 10*time.Second, 10*time.Millisecond, "a leader removes itself")
	require.Eventually(t, func() bool {
		_, _, stopped := leader.Membership()
		return stopped
	}, 5*time.Second, 10*time.Millisecond, "the removed leader stops")
	c.stop(leaderID)
	require.Equal(t, uint64(4), c.add(1), "the one left leads a group of one")
}

func TestSingleVoterCannotBeRemoved(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 1, nil)
	require.ErrorIs(t, c.leader().RemoveServer(ctxT(t), "n1"), ErrMemberConflict)
}

func TestRestoreIsAtomicForReaders(t *testing.T) {
	t.Parallel()
	// A reader holding the DB across a restore keeps working: the state is
	// replaced by ingestion, not by closing and reopening the database.
	c := newCluster(t, 1, nil)
	n := c.leader()
	c.add(5)
	require.NoError(t, n.Snapshot())
	c.add(5)
	db := n.DB()
	snap := db.NewSnapshot()
	defer snap.Close()
	snaps, err := n.snaps.List()
	require.NoError(t, err)
	_, rc, err := n.snaps.Open(snaps[0].ID)
	require.NoError(t, err)
	require.NoError(t, n.fsm.Restore(rc))
	require.Same(t, db, n.DB())
	require.Equal(t, uint64(5), readN(n))
	v, closer, err := snap.Get([]byte("n"))
	require.NoError(t, err)
	require.Equal(t, uint64(10), binary.BigEndian.Uint64(v), "an older snapshot still reads its state")
	closer.Close()
	_, _, err = db.Get([]byte("absent"))
	require.ErrorIs(t, err, pebble.ErrNotFound)
}

func TestNeedsRestoreAfterAnInterruptedInstall(t *testing.T) {
	t.Parallel()
	logs := raft.NewInmemStore()
	snaps := raft.NewInmemSnapshotStore()
	_, trans := raft.NewInmemTransport("")
	// No snapshot: nothing to restore.
	need, err := needsRestore(logs, snaps, 0)
	require.NoError(t, err)
	require.False(t, need)

	sink, err := snaps.Create(raft.SnapshotVersionMax, 10, 1, raft.Configuration{}, 1, trans)
	require.NoError(t, err)
	require.NoError(t, sink.Close())
	for i := uint64(8); i <= 10; i++ {
		typ := raft.LogNoop
		if i == 8 {
			typ = raft.LogCommand
		}
		require.NoError(t, logs.StoreLog(&raft.Log{Index: i, Term: 1, Type: typ}))
	}
	for applied, want := range map[uint64]bool{10: false, 8: false, 7: true, 2: true} {
		need, err := needsRestore(logs, snaps, applied)
		require.NoError(t, err)
		require.Equal(t, want, need, "applied %d", applied)
	}
}

func TestFastModeWritesTheLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &counter{}
	n, err := Open(Config{Dir: dir, Bootstrap: true, Fast: true, HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}, c.registry())
	require.NoError(t, err)
	require.NoError(t, n.WaitLeader(ctxT(t)))
	_, err = n.Propose(context.Background(), Command(cmdAdd, []byte{4}))
	require.NoError(t, err)
	last := n.Status().LastIndex
	require.NoError(t, n.Close())
	entries, err := os.ReadDir(filepath.Join(dir, "raft", "wal"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	n = open(t, dir, &counter{})
	defer n.Close()
	require.GreaterOrEqual(t, n.Status().LastIndex, last, "the unsynced log was kept")
	require.Equal(t, uint64(4), read(t, n))
}

func TestTransferLeadership(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, nil)
	old := c.leader()
	start := time.Now()
	require.NoError(t, old.TransferLeadership())
	next := c.leader()
	require.NotSame(t, old, next)
	t.Logf("lead moved from %s to %s in %v", old.Status().NodeID, next.Status().NodeID, time.Since(start))
	require.NoError(t, old.TransferLeadership(), "a follower has nothing to hand over")
	require.Equal(t, uint64(1), c.add(1))

	solo := newCluster(t, 1, nil)
	require.NoError(t, solo.leader().TransferLeadership(), "nobody to hand over to")
	require.True(t, solo.leader().IsLeader())
}

// A five-node group keeps committing with two members down, stops with
// three down, and the members that come back catch up.
func TestClusterOfFiveSurvivesTwoLosses(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 5, nil)
	ms, err := c.leader().Members()
	require.NoError(t, err)
	require.Len(t, ms, 5)
	for i := 0; i < 10; i++ {
		c.add(1)
	}
	c.converged(10)

	// Lose the leader and one follower: three of five still commit.
	first := c.leader().Status().NodeID
	c.stop(first)
	second := c.leader().Status().NodeID
	require.NotEqual(t, first, second)
	c.stop(second)
	require.Equal(t, uint64(11), c.add(1), "writes go on with three of five")
	c.converged(11)

	// A third loss leaves two of five: no majority, so nothing commits.
	third := c.leader()
	thirdID := third.Status().NodeID
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err = third.Propose(ctx, Command(cmdAdd, []byte{1}))
	cancel()
	require.NoError(t, err, "the leader of three commits")
	c.stop(thirdID)
	require.Eventually(t, func() bool {
		for _, n := range c.nodes {
			if n.LeaderID() != "" {
				return false
			}
		}
		return true
	}, 5*time.Second, 10*time.Millisecond, "the two left know no leader")
	for _, n := range c.nodes {
		_, err := n.Propose(context.Background(), Command(cmdAdd, []byte{1}))
		require.Error(t, err, "two of five cannot lead")
	}

	// The three come back from their own data and everyone converges.
	for _, id := range []string{first, second, thirdID} {
		c.open(id, false)
	}
	require.Equal(t, uint64(13), c.add(1))
	c.converged(13)
}
