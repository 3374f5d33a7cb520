package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShardClusterOfFive runs five `jobbie shard` processes: the cluster
// keeps taking writes with two members killed, refuses them (503, nothing
// committed) with three gone, and every acknowledged job is on every node
// once the three come back from their own disks.
func TestShardClusterOfFive(t *testing.T) {
	t.Parallel()
	c := newShardCluster(t, 5)
	var acked []string
	for i := 0; i < 10; i++ {
		n := c.running()[i%5]
		id, code := c.enqueue(n, "five", i)
		require.NotEmpty(t, id, "enqueue through %s: status %d", n.id, code)
		acked = append(acked, id)
	}

	// Kill the leader, then the next leader: three of five keep committing.
	var killed []string
	for round := 0; round < 2; round++ {
		l := c.leader()
		c.kill(l.id)
		killed = append(killed, l.id)
		start := time.Now()
		for i := 0; ; i++ {
			id, code := c.enqueue(c.running()[0], "five", 100*(round+1)+i)
			if id != "" {
				acked = append(acked, id)
				t.Logf("killed %s; a write committed %v later", l.id, time.Since(start))
				break
			}
			require.Equal(t, http.StatusServiceUnavailable, code, "during the election writes get 503")
			require.Less(t, time.Since(start), 15*time.Second, "no leader among %d nodes", len(c.running()))
			time.Sleep(20 * time.Millisecond)
		}
	}
	require.Len(t, c.running(), 3)

	// A third loss leaves two: no majority, so every write is refused and
	// none is applied anywhere.
	// What the last leader committed bounds what any member may apply: a
	// loaded follower may still apply entries that leader committed, but
	// nothing after it can commit. The leader's own loops may commit an
	// entry between the read of its status and the kill; a survivor knows
	// of it only from that leader, so by the time a write has been
	// refused after the kill, the highest commit index a survivor shows
	// is still one the leader reached.
	l := c.leader()
	lst, ok := c.status(l)
	require.True(t, ok)
	c.kill(l.id)
	killed = append(killed, l.id)
	id, code := c.enqueue(c.running()[0], "five", 899)
	require.Empty(t, id, "two of five acknowledged a write")
	require.Equal(t, http.StatusServiceUnavailable, code)
	bound := lst.CommitIndex
	for _, n := range c.running() {
		st, ok := c.status(n)
		require.True(t, ok)
		bound = max(bound, st.CommitIndex)
	}
	t.Logf("the last leader's commit index read before the kill: %d; the survivors' after it: %d", lst.CommitIndex, bound)
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		id, code := c.enqueue(c.running()[i%2], "five", 900+i)
		require.Empty(t, id, "two of five acknowledged a write")
		require.Equal(t, http.StatusServiceUnavailable, code)
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range c.running() {
		st, ok := c.status(n)
		require.True(t, ok)
		require.LessOrEqual(t, st.AppliedIndex, bound, "%s applied something without a majority", n.id)
	}

	// The three come back and the five converge on every acknowledged job.
	for _, id := range killed {
		c.start(id, false)
	}
	c.converged()
	id, code = c.enqueue(c.running()[0], "five", 999)
	require.NotEmpty(t, id, "writes after the three came back: status %d", code)
	acked = append(acked, id)
	for _, n := range c.running() {
		c.allPresent(n, acked, 15*time.Second)
	}
}
