package replica

import "testing"

// Members in step read no entry back from the log: the leader sends each
// entry to the followers, and a follower applies it, from the cache in
// front of the log (before it, the leader of three read each entry back
// four times and a follower once).
func TestLogEntriesInStepAreNotReadBack(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, nil)
	c.converged(c.add(1))
	before := map[string]uint64{}
	for id, n := range c.nodes {
		before[id] = n.logReads.Load()
	}
	var want uint64
	for range 40 {
		want = c.add(1)
	}
	c.converged(want)
	for id, n := range c.nodes {
		// A few at most, not 40 or 160: a slow member may fall behind the cache.
		if d := n.logReads.Load() - before[id]; d > 8 {
			t.Errorf("%s read %d entries back from its log for 40 entries", id, d)
		}
	}
}
