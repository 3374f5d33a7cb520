package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

const cmdAdd CommandType = 1

// counter is a tiny state machine: cmdAdd adds its payload byte to key "n"
// and returns the new value; a payload of 0 is a business failure.
type counter struct {
	applied atomic.Int64
	after   atomic.Int64
}

func (c *counter) registry() *Registry {
	r := new(Registry)
	r.Register(cmdAdd, "add", func(tx *Tx, p []byte) (any, error) {
		c.applied.Add(1)
		if p[0] == 0 {
			return nil, errors.New("zero")
		}
		var n uint64
		if v, closer, err := tx.Get([]byte("n")); err == nil {
			n = binary.BigEndian.Uint64(v)
			closer.Close()
		}
		n += uint64(p[0])
		if err := tx.Set([]byte("n"), binary.BigEndian.AppendUint64(nil, n), nil); err != nil {
			panic(err)
		}
		tx.AfterCommit(func() { c.after.Add(1) })
		return n, nil
	})
	return r
}

func open(t testing.TB, dir string, c *counter) *Node {
	t.Helper()
	n, err := Open(Config{Dir: dir, Bootstrap: true, HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		Logger: hclog.NewNullLogger()}, c.registry())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, n.WaitLeader(ctx))
	return n
}

func read(t *testing.T, n *Node) uint64 {
	v, closer, err := n.DB().Get([]byte("n"))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0
	}
	require.NoError(t, err)
	defer closer.Close()
	return binary.BigEndian.Uint64(v)
}

func TestEntryCodecRoundTrip(t *testing.T) {
	t.Parallel()
	cmds := [][]byte{{1, 2}, {}, make([]byte, 300)}
	now, got, err := decodeEntry(encodeEntry(42, cmds))
	require.NoError(t, err)
	require.Equal(t, int64(42), now)
	require.Equal(t, cmds, got)
	b := encodeEntry(1, cmds)
	_, _, err = decodeEntry(b[:len(b)-1])
	require.Error(t, err)
	_, _, err = decodeEntry(append(b, 0))
	require.Error(t, err)
}

func TestRegistryRefusesDuplicatesAndUnknown(t *testing.T) {
	t.Parallel()
	r := new(Registry)
	r.Register(1, "a", func(*Tx, []byte) (any, error) { return nil, nil })
	require.Panics(t, func() { r.Register(1, "b", func(*Tx, []byte) (any, error) { return nil, nil }) })
	v, err := r.Apply(&Tx{}, []byte{byte(IgnoreUnknown | 7)})
	require.Nil(t, v, "ignorable unknown types are skipped")
	require.NoError(t, err)
	require.Panics(t, func() { _, _ = r.Apply(&Tx{}, []byte{9}) }, "an unknown type is a divergence")
}

func TestConcurrentProposalsShareEntries(t *testing.T) {
	t.Parallel()
	c := &counter{}
	n := open(t, t.TempDir(), c)
	defer n.Close()
	before := n.AppliedIndex()
	const writers, each = 32, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				v, err := n.Propose(context.Background(), Command(cmdAdd, []byte{1}))
				require.NoError(t, err)
				require.Greater(t, v.(uint64), uint64(0))
			}
		}()
	}
	wg.Wait()
	require.Equal(t, uint64(writers*each), read(t, n))
	require.EqualValues(t, writers*each, c.after.Load(), "after-commit hooks ran once each")
	entries := n.AppliedIndex() - before
	require.Less(t, entries, uint64(writers*each), "group commit packed proposals into fewer entries")
	t.Logf("%d proposals in %d entries", writers*each, entries)

	// A business failure comes back as the command's error and writes nothing.
	_, err := n.Propose(context.Background(), Command(cmdAdd, []byte{0}))
	require.EqualError(t, err, "zero")
	require.Equal(t, uint64(writers*each), read(t, n))
}

func TestRestartDoesNotReapply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &counter{}
	n := open(t, dir, c)
	for i := 0; i < 10; i++ {
		_, err := n.Propose(context.Background(), Command(cmdAdd, []byte{3}))
		require.NoError(t, err)
	}
	require.NoError(t, n.Close())

	c2 := &counter{}
	n2 := open(t, dir, c2)
	defer n2.Close()
	require.Equal(t, uint64(30), read(t, n2), "state kept, log entries not applied twice")
	require.Zero(t, c2.applied.Load())
	v, err := n2.Propose(context.Background(), Command(cmdAdd, []byte{1}))
	require.NoError(t, err)
	require.Equal(t, uint64(31), v)
}

// A crash loses Pebble's memtables (it runs without a WAL); the entries
// since the last flush are applied again from the Raft log, each once.
func TestCrashAppliesTheLostTailFromTheLog(t *testing.T) {
	t.Parallel()
	propose := func(n *Node, times int, p byte) {
		for i := 0; i < times; i++ {
			_, err := n.Propose(context.Background(), Command(cmdAdd, []byte{p}))
			require.NoError(t, err)
		}
	}
	dir := t.TempDir()
	c := &counter{}
	n := open(t, dir, c)
	propose(n, 4, 1)
	require.NoError(t, n.shutdown(false))

	c = &counter{}
	n = open(t, dir, c)
	require.Equal(t, uint64(4), read(t, n), "nothing was flushed: the whole log applies again")
	require.EqualValues(t, 4, c.applied.Load())
	require.NoError(t, n.Snapshot()) // flushes: 4 is now on disk
	propose(n, 5, 10)
	require.NoError(t, n.shutdown(false))

	c = &counter{}
	n = open(t, dir, c)
	defer n.Close()
	require.Equal(t, uint64(54), read(t, n))
	require.EqualValues(t, 5, c.applied.Load(), "only the entries after the flush apply again")
	v, err := n.Propose(context.Background(), Command(cmdAdd, []byte{1}))
	require.NoError(t, err)
	require.Equal(t, uint64(55), v)
}

func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	c := &counter{}
	n := open(t, t.TempDir(), c)
	defer n.Close()
	_, err := n.Propose(context.Background(), Command(cmdAdd, []byte{7}))
	require.NoError(t, err)
	require.NoError(t, n.Snapshot())
	_, err = n.Propose(context.Background(), Command(cmdAdd, []byte{5}))
	require.NoError(t, err)
	require.Equal(t, uint64(12), read(t, n))

	// Restore the latest snapshot into the running state machine: the
	// state goes back to what it was at the snapshot.
	snaps, err := n.snaps.List()
	require.NoError(t, err)
	require.NotEmpty(t, snaps)
	_, rc, err := n.snaps.Open(snaps[0].ID)
	require.NoError(t, err)
	require.NoError(t, n.fsm.Restore(rc))
	require.Equal(t, uint64(7), read(t, n))
	require.Equal(t, snaps[0].Index, n.AppliedIndex())
}

func TestProposeOnFollowerIsNotLeader(t *testing.T) {
	t.Parallel()
	c := &counter{}
	n, err := Open(Config{Dir: t.TempDir(), Logger: hclog.NewNullLogger()}, c.registry()) // not bootstrapped
	require.NoError(t, err)
	defer n.Close()
	_, err = n.Propose(context.Background(), Command(cmdAdd, []byte{1}))
	require.ErrorIs(t, err, ErrNotLeader)
}

func TestRaftErrorsKeepTheOutcomeKnown(t *testing.T) {
	t.Parallel()
	require.ErrorIs(t, raftError(raft.ErrNotLeader), ErrNotLeader, "never appended: safe to send again")
	require.ErrorIs(t, raftError(raft.ErrLeadershipTransferInProgress), ErrNotLeader)
	require.ErrorIs(t, raftError(raft.ErrLeadershipLost), ErrLeadershipLost, "appended, maybe committed: not a plain not-leader")
	require.NotErrorIs(t, raftError(raft.ErrLeadershipLost), ErrNotLeader)
	require.ErrorIs(t, raftError(raft.ErrRaftShutdown), ErrClosed)
	require.NoError(t, raftError(nil))
}
