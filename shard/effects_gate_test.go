package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/replica"
)

// waitFormats waits until every member of g knows from gossip that every
// other member applies effects entries: before that a leader proposes
// commands.
func (g *shardGroup) waitFormats() {
	g.t.Helper()
	eventually(g.t, 20*time.Second, func() bool {
		for _, b := range g.nodes {
			reads := b.srv.effectsReader()
			for _, o := range g.nodes {
				if o != b && !reads(o.srv.cfg.NodeID) {
					return false
				}
			}
		}
		return true
	}, "every member saw the others' entry formats in gossip")
}

// With ReplicateCommands every entry carries commands: a follower
// applies no effects entry.
func TestClusterReplicatingCommands(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3, func(c *Config) { c.ReplicateCommands = true })
	g.waitFormats()
	_, follower := g.leaderAndFollower()
	r := retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "fx", "payload": 1})
	created(t, r)
	require.Equal(t, "pending", follower.job(r.Body["job_id"].(string))["state"], "read your write through the same follower")
	require.Zero(t, follower.srv.repl.Status().EffectsApplied)
}

// The effects reader follows what gossip shows of this shard's members:
// a member that advertises no entry format (an older build) or one below
// effects entries is not a reader, another shard's node of the same id
// does not count, and a member that left the pool keeps what it last
// showed.
func TestEffectsReaderFollowsGossip(t *testing.T) {
	t.Parallel()
	pool := newPool(t, "shard-s1-n1", nil, gossip.Meta{Role: gossip.RoleShard, ShardID: "s1", NodeID: "n1", EntryFormat: replica.EntryFormat})
	join := []string{pool.Addr()}
	older := newPool(t, "shard-s1-n2", join, gossip.Meta{Role: gossip.RoleShard, ShardID: "s1", NodeID: "n2"})
	newPool(t, "shard-s1-n3", join, gossip.Meta{Role: gossip.RoleShard, ShardID: "s1", NodeID: "n3", EntryFormat: replica.EntryFormat})
	newPool(t, "shard-s2-n4", join, gossip.Meta{Role: gossip.RoleShard, ShardID: "s2", NodeID: "n4", EntryFormat: replica.EntryFormat})

	n := &Node{cfg: Config{ShardID: "s1", Gossip: pool}}
	reads := n.effectsReader()
	seen := func(want int, cond func(m gossip.Meta) bool) {
		t.Helper()
		eventually(t, 20*time.Second, func() bool {
			got := 0
			for _, m := range pool.Members() {
				if cond(m.Meta) {
					got++
				}
			}
			return got == want
		}, "gossip converged")
		n.noteFormats()
	}
	seen(4, func(gossip.Meta) bool { return true })
	require.False(t, reads("n2"), "an older build advertises no format")
	require.True(t, reads("n3"))
	require.False(t, reads("n4"), "another shard's node")
	require.False(t, reads("n9"), "a member gossip never showed")

	require.NoError(t, older.UpdateMeta(func(m *gossip.Meta) { m.EntryFormat = replica.EntryFormat }))
	seen(1, func(m gossip.Meta) bool { return m.NodeID == "n2" && m.EntryFormat == replica.EntryFormat })
	require.True(t, reads("n2"), "upgraded")

	require.NoError(t, older.Shutdown())
	seen(0, func(m gossip.Meta) bool { return m.NodeID == "n2" })
	require.True(t, reads("n2"), "a member out of the pool keeps what it showed")
}

func newPool(t *testing.T, name string, join []string, meta gossip.Meta) *gossip.Pool {
	t.Helper()
	p, err := gossip.New(gossip.Config{NodeName: name, BindAddr: "127.0.0.1:0", Join: join, Fast: true, Keys: [][]byte{pkitest.GossipKey}, Meta: meta})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}
