package shard

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
)

// A group replicates the leader's effects by default (Config.
// ReplicateCommands false): a follower answers reads of what the leader
// applied, its event streams hear of new events though no handler ran
// there, and every member ends with the same state.
func TestClusterReplicatingEffects(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	g.waitFormats()
	_, follower := g.leaderAndFollower()
	follower.srv.events.SetHeartbeat(time.Hour) // only a nudge makes the stream read
	s := follower.stream()
	// Fails the reads below rather than hang if no nudge comes.
	watchdog := time.AfterFunc(20*time.Second, s.close)
	defer watchdog.Stop()
	require.Equal(t, "jobbie events", s.next().Comment)

	r := retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "fx", "payload": map[string]int{"n": 1}})
	created(t, r)
	id := r.Body["job_id"].(string)
	require.Equal(t, "pending", follower.job(id)["state"], "read your write through the same follower")
	r = retry(t, follower, "POST", "/api/v1/fetch", map[string]any{"queues": []string{"fx"}, "worker_id": "w1", "timeout": 2})
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = retry(t, follower, "POST", "/api/v1/ack/"+id, map[string]any{"result": map[string]bool{"ok": true}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	for _, want := range []string{"enqueued", "started", "completed"} {
		f := s.nextEvent()
		require.Equal(t, want, f.Event)
		require.Equal(t, id, f.Data["job_id"])
	}
	require.Equal(t, "completed", follower.job(id)["state"])
	require.NotZero(t, follower.srv.repl.Status().EffectsApplied, "the follower applied the leader's batches")

	// Members at the same applied index hold the same bytes (the leader's
	// loops may still be writing: compare snapshots of one index).
	for attempt := 0; ; attempt++ {
		var idx []uint64
		var dumps [][]byte
		for _, b := range g.nodes {
			i, d := dumpState(t, b)
			idx, dumps = append(idx, i), append(dumps, d)
		}
		if idx[0] == idx[1] && idx[1] == idx[2] {
			require.Equal(t, string(dumps[0]), string(dumps[1]))
			require.Equal(t, string(dumps[0]), string(dumps[2]))
			break
		}
		require.Less(t, attempt, 20, "the members never stood at one index: %v", idx)
		for _, b := range g.nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			require.NoError(t, b.srv.repl.WaitApplied(ctx, max(idx[0], idx[1], idx[2])))
			cancel()
		}
	}
}

// A member that led, then followed a leader replicating effects, answers
// reads from the state and not from the views its handlers kept.
func TestClusterReplicatingEffectsDropsViews(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	g.waitFormats()
	leader, follower := g.leaderAndFollower()
	transfer := func(from, to *bundle) {
		t.Helper()
		require.NoError(t, from.srv.repl.Raft().LeadershipTransferToServer(raft.ServerID(to.srv.cfg.NodeID), raft.ServerAddress(to.srv.repl.RaftAddr())).Error())
		eventually(t, 20*time.Second, to.srv.IsLeader, "the lead moved")
	}
	transfer(leader, follower)
	r := retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "fx", "payload": 1})
	created(t, r) // its handlers cache the queue's record
	transfer(follower, leader)
	r = retry(t, leader, "POST", "/api/v1/queues/fx/pause", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, follower.srv.repl.WaitApplied(ctx, leader.srv.repl.AppliedIndex()))
	r = follower.call("GET", "/api/v1/queues/fx", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, true, r.Body["paused"], "the former leader's view of the queue: %s", r.Raw)
}

// dumpState is the applied index and every key and value of b's state,
// read from one snapshot.
func dumpState(t *testing.T, b *bundle) (uint64, []byte) {
	t.Helper()
	snap := b.srv.repl.DB().NewSnapshot()
	defer snap.Close()
	index, err := replica.AppliedIndexOf(snap)
	require.NoError(t, err)
	var buf bytes.Buffer
	it, err := snap.NewIter(nil)
	require.NoError(t, err)
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&buf, "%x=%x\n", it.Key(), it.Value())
	}
	require.NoError(t, it.Close())
	return index, buf.Bytes()
}
