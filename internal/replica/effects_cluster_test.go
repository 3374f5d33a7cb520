package replica

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// effectsCluster is a group in Effects mode whose nodes run a
// cachedCounter each (ledgers, by node id).
func effectsCluster(t *testing.T, size int) (*cluster, map[string]*cachedCounter) {
	t.Helper()
	var mu sync.Mutex
	ledgers := map[string]*cachedCounter{}
	c := newClusterOf(t, size, func(cfg *Config) { cfg.Effects = true }, func(id string) *Registry {
		l := &cachedCounter{}
		mu.Lock()
		ledgers[id] = l
		mu.Unlock()
		return l.registry()
	})
	return c, ledgers
}

func raftID(n *Node) raft.ServerID { return raft.ServerID(n.cfg.NodeID) }

func raftAddr(n *Node) raft.ServerAddress { return raft.ServerAddress(n.RaftAddr()) }

func (c *cluster) members() []*Node {
	var out []*Node
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

// proposeAny proposes cmd to whichever of nodes leads, waiting for a
// leader when none does; safe from any goroutine.
func proposeAny(ctx context.Context, nodes []*Node, cmd []byte) (any, error) {
	for {
		changed := make(chan struct{}, 1)
		stop := make(chan struct{})
		for _, n := range nodes {
			ch, cancel := n.Subscribe()
			go func() {
				defer cancel()
				select {
				case <-ch:
					select {
					case changed <- struct{}{}:
					default:
					}
				case <-stop:
				}
			}()
		}
		for _, n := range nodes {
			if v, err := n.Propose(ctx, cmd); !errors.Is(err, ErrNotLeader) {
				close(stop)
				return v, err
			}
		}
		select { // nobody leads: wait until someone's view changes
		case <-changed:
			close(stop)
		case <-ctx.Done():
			close(stop)
			return nil, ctx.Err()
		}
	}
}

// convergedDumps waits until every node has applied what the furthest
// one has and returns the state of each.
func convergedDumps(t *testing.T, nodes []*Node) [][]string {
	t.Helper()
	var top uint64
	for _, n := range nodes {
		top = max(top, n.AppliedIndex())
	}
	var out [][]string
	for _, n := range nodes {
		require.NoError(t, n.WaitApplied(ctxT(t), top))
		out = append(out, dump(t, n.DB()))
	}
	return out
}

// A random load in Effects mode: every member ends with the same bytes,
// the proposers get the outcomes the commands call for, and the
// after-commit callbacks run once, on the leader.
func TestEffectsClusterConverges(t *testing.T) {
	t.Parallel()
	c, ledgers := effectsCluster(t, 3)
	nodes := c.members()
	term := c.leader().Term()
	var (
		wg               sync.WaitGroup
		acceptedAdds     atomic.Int64
		addSum, unknowns atomic.Uint64
		mu               sync.Mutex
		totals           []uint64
		wantKeys         = map[byte][]byte{} // key → value; absent: dropped or never put
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			ks := []byte{byte('a' + 2*w), byte('a' + 2*w + 1)}
			mine := map[byte][]byte{}
			for range 120 {
				cmd := randomCmd(r, ks)
				v, err := proposeAny(ctxT(t), nodes, cmd)
				if errors.Is(err, ErrLeadershipLost) || errors.Is(err, ErrClosed) {
					unknowns.Add(1)
					continue
				}
				k := cmd[1]
				switch CommandType(cmd[0]) {
				case cmdAdd:
					if cmd[1] == 0 {
						require.EqualError(t, err, "zero")
						continue
					}
					require.NoError(t, err)
					acceptedAdds.Add(1)
					addSum.Add(uint64(cmd[1]))
					mu.Lock()
					totals = append(totals, v.(uint64))
					mu.Unlock()
				case cmdPut:
					if len(cmd) < 3 {
						require.EqualError(t, err, "empty value")
						continue
					}
					require.NoError(t, err)
					mine[k] = cmd[2:]
				case cmdDrop:
					if _, ok := mine[k]; !ok {
						require.EqualError(t, err, "absent")
						continue
					}
					require.NoError(t, err)
					delete(mine, k)
				case cmdSpoil:
					require.EqualError(t, err, "spoiled")
				}
			}
			mu.Lock()
			for k, v := range mine {
				wantKeys[k] = v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	dumps := convergedDumps(t, nodes)
	for i := range dumps {
		require.Equal(t, dumps[0], dumps[i], "member %s", nodes[i].Status().NodeID)
	}
	if unknowns.Load() > 0 {
		t.Logf("%d outcomes unknown (a leader changed): exact checks skipped", unknowns.Load())
		return
	}
	leader := c.leader()
	require.Equal(t, addSum.Load(), readN(leader))
	slices.Sort(totals)
	require.Len(t, slices.Compact(totals), int(acceptedAdds.Load()), "every add saw its own total")
	require.Equal(t, addSum.Load(), totals[len(totals)-1])
	for k := byte('a'); k < 'a'+8; k++ {
		v, closer, err := leader.DB().Get([]byte{'k', k})
		if want, ok := wantKeys[k]; ok {
			require.NoError(t, err)
			require.Equal(t, want, v)
			closer.Close()
		} else {
			require.Error(t, err, "key %c", k)
		}
	}
	var afters int64
	for id, l := range ledgers {
		afters += l.after.Load()
		if leader.Term() == term && id != leader.Status().NodeID {
			require.Zero(t, l.after.Load(), "a follower runs no callback of an entry it did not evaluate")
		}
	}
	if leader.Term() == term {
		require.Equal(t, acceptedAdds.Load(), afters, "each accepted add's callback ran once")
	}
}

// A member that led, followed by applying effects, and leads again
// answers from the state and not from what its caches kept.
func TestEffectsLeaderChangeResetsCaches(t *testing.T) {
	t.Parallel()
	c, _ := effectsCluster(t, 3)
	nodes := c.members()
	var total uint64
	add := func(v byte) {
		t.Helper()
		res, err := proposeAny(ctxT(t), nodes, Command(cmdAdd, []byte{v}))
		require.NoError(t, err)
		total += uint64(v)
		require.Equal(t, total, res)
	}
	first := c.leader()
	for range 5 {
		add(3)
	}
	var second *Node
	for _, n := range nodes {
		if n != first {
			second = n
			break
		}
	}
	transfer := func(from, to *Node) {
		t.Helper()
		require.NoError(t, from.Raft().LeadershipTransferToServer(raftID(to), raftAddr(to)).Error())
		require.Same(t, to, c.leader())
	}
	transfer(first, second)
	for range 5 {
		add(2)
	}
	transfer(second, first)
	for range 5 {
		add(1)
	}
	ds := convergedDumps(t, nodes)
	for _, d := range ds {
		require.Equal(t, ds[0], d)
	}
	require.Equal(t, total, readN(first))
}

// The leader dies in the middle of a load: the members left agree, no
// acknowledged add is lost, the new leader counts from the state, and the
// dead member, back, catches up to the same bytes.
func TestEffectsLeaderKilledMidLoad(t *testing.T) {
	t.Parallel()
	c, _ := effectsCluster(t, 3)
	nodes := c.members()
	var (
		wg                      sync.WaitGroup
		acked, unknown, settled atomic.Uint64
		halfway                 = make(chan struct{})
		once                    sync.Once
	)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 80 {
				_, err := proposeAny(ctxT(t), nodes, Command(cmdAdd, []byte{1}))
				switch {
				case err == nil:
					acked.Add(1)
				case errors.Is(err, ErrLeadershipLost), errors.Is(err, ErrClosed):
					unknown.Add(1)
				default:
					require.NoError(t, err, "writer %d", w)
				}
				if settled.Add(1) == 100 {
					once.Do(func() { close(halfway) })
				}
			}
		}()
	}
	<-halfway
	dead := c.leader()
	id := dead.Status().NodeID
	c.stop(id)
	wg.Wait()
	// The writers may all have ended on the closing leader, before the
	// survivors heard that its last entries committed: they apply them
	// once one of them leads and has applied every earlier entry.
	c.leader()
	left := c.members()
	dumps := convergedDumps(t, left)
	require.Equal(t, dumps[0], dumps[1])
	n := readN(left[0])
	t.Logf("acked %d, unknown %d, applied %d", acked.Load(), unknown.Load(), n)
	require.GreaterOrEqual(t, n, acked.Load())
	require.LessOrEqual(t, n, acked.Load()+unknown.Load())
	for i := range 5 {
		res, err := proposeAny(ctxT(t), left, Command(cmdAdd, []byte{1}))
		require.NoError(t, err)
		require.Equal(t, n+uint64(i)+1, res, "the new leader counts from the state")
	}
	c.open(id, false)
	all := c.members()
	dumps = convergedDumps(t, all)
	for i := range dumps {
		require.Equal(t, dumps[0], dumps[i], "member %s", all[i].Status().NodeID)
	}
}

// Entries evaluated and then refused or lost in Raft while the lead moves
// back and forth leave nothing in the caches of the member that evaluated
// them: once the load stops, the leader counts from the state.
func TestEffectsFailedEntriesLeaveNoCache(t *testing.T) {
	t.Parallel()
	c, _ := effectsCluster(t, 2)
	nodes := c.members()
	var (
		wg      sync.WaitGroup
		failed  atomic.Uint64
		stop    = make(chan struct{})
		started = make(chan struct{}, 2)
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := proposeAny(ctxT(t), nodes, Command(cmdAdd, []byte{1}))
				if err != nil {
					require.True(t, errors.Is(err, ErrLeadershipLost) || errors.Is(err, ErrClosed), "%v", err)
					failed.Add(1)
				}
				if i == 20 {
					started <- struct{}{}
				}
			}
		}()
	}
	<-started
	<-started
	for range 6 {
		from := c.leader()
		var to *Node
		for _, n := range nodes {
			if n != from {
				to = n
			}
		}
		require.NoError(t, from.Raft().LeadershipTransferToServer(raftID(to), raftAddr(to)).Error())
	}
	close(stop)
	wg.Wait()
	dumps := convergedDumps(t, nodes)
	require.Equal(t, dumps[0], dumps[1])
	n := readN(nodes[0])
	t.Logf("%d outcomes unknown", failed.Load())
	for _, leader := range []*Node{c.leader()} {
		for i := range 3 {
			res, err := proposeAny(ctxT(t), nodes, Command(cmdAdd, []byte{1}))
			require.NoError(t, err)
			require.Equal(t, n+uint64(i)+1, res, "leader %s counts from the state", leader.Status().NodeID)
		}
	}
}
