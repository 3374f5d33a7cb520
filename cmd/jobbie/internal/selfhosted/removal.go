package selfhosted

import (
	"context"
	"time"

	"github.com/jobbie/jobbie/internal/replica/edge"
)

// Member is a shard node whose membership of its cluster is watched
// (*shard.Node).
type Member interface {
	// Membership says whether the node is a member of the latest
	// configuration it knows, whether it knows one, and whether Raft
	// stopped itself.
	Membership() (member, known, stopped bool)
	Status() edge.NodeStatus
	// RemovedByGroup asks the group's leader whether it still lists
	// the node.
	RemovedByGroup() bool
	Subscribe() (<-chan struct{}, func())
}

// askPeersAfter is how long a member goes without a leader before it asks
// the group's leader whether it was removed: longer than an election.
const askPeersAfter = 3 * time.Second

// AwaitRemoval returns true once the cluster removed node, looking at
// each change of its Raft state and every second; false when ctx ends
// first. joined says the node was added as it started (it is a member
// even before its configuration says so).
func AwaitRemoval(ctx context.Context, node Member, joined bool) bool {
	changes, unsubscribe := node.Subscribe()
	defer unsubscribe()
	removed := removalWatch(node, joined, time.Now)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-changes:
		case <-tick.C:
		}
		if removed() {
			return true
		}
	}
}

// removalWatch returns a check that is true once the cluster removed this
// node: it was a member of its latest configuration (or was added at
// start) and no longer is; or Raft stopped itself (a leader that applied
// its own removal); or, having known no leader for a while, the group's
// leader lists it no more (Raft may never send a removed member the entry
// that removes it). A node that restarts after being removed and added
// again starts outside the configuration it has, so only leaving it
// counts.
func removalWatch(node Member, joined bool, now func() time.Time) func() bool {
	was := joined
	var leaderless time.Time // since when this node knows no leader
	return func() bool {
		member, known, stopped := node.Membership()
		if member {
			was = true
		}
		if stopped || (was && known && !member) {
			return true
		}
		if node.Status().LeaderID != "" {
			leaderless = time.Time{}
			return false
		}
		if leaderless.IsZero() {
			leaderless = now()
		}
		return now().Sub(leaderless) >= askPeersAfter && node.RemovedByGroup()
	}
}
