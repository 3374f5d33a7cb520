package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShardClusterFailoverAndRestart runs a 3-node shard cluster of real
// processes: it elects a leader and replicates; a write sent to a follower
// is forwarded and readable on every node; SIGKILL of the leader elects a
// new one (the time is logged), writes go on, an active job's lease is
// honoured by the new leader until it expires, no acknowledged job is
// lost; the killed node rejoins from its disk; and a restart of the whole
// cluster from disk keeps every job.
func TestShardClusterFailoverAndRestart(t *testing.T) {
	t.Parallel()
	c := newShardCluster(t, 3)
	leader := c.leader()
	fs := c.followers(leader)
	require.Len(t, fs, 2)

	var acked []string
	for i := 0; i < 30; i++ {
		id, code := c.enqueue(fs[i%2], "cluster", i)
		require.NotEmpty(t, id, "enqueue through follower %s: status %d", fs[i%2].id, code)
		acked = append(acked, id)
		// The follower applied the write before answering: read your write.
		require.Equal(t, "pending", c.jobState(fs[i%2], id))
	}
	for _, n := range c.running() {
		c.allPresent(n, acked, 10*time.Second)
	}

	// A worker leases a job through a follower; the lease is replicated.
	const lease = 4 * time.Second
	leasedAt := time.Now() // the lease starts after this, on the leader's clock
	code, raw, err := c.do(fs[0], http.MethodPost, "/api/v1/fetch",
		map[string]any{"queues": []string{"cluster"}, "worker_id": "w1", "timeout": 0, "lease_duration": lease.Seconds()})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(raw))
	var leased struct {
		JobID string `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal(raw, &leased))
	require.NotEmpty(t, leased.JobID)

	// Kill the leader; writes through a follower resume once a new leader
	// is elected (503 with Retry-After meanwhile, never a lost write).
	killed := time.Now()
	c.kill(leader.id)
	var electedAfter time.Duration
	for i := 0; ; i++ {
		id, code := c.enqueue(fs[1], "cluster", 1000+i)
		if id != "" {
			electedAfter = time.Since(killed)
			acked = append(acked, id)
			break
		}
		require.Contains(t, []int{http.StatusServiceUnavailable}, code, "during the election writes get 503")
		require.Less(t, time.Since(killed), 15*time.Second, "no new leader")
		time.Sleep(20 * time.Millisecond)
	}
	next := c.leader()
	t.Logf("leader %s killed; %s leads, first write accepted %v after the kill", leader.id, next.id, electedAfter)
	require.Less(t, electedAfter, 5*time.Second)

	// The new leader honours the lease: the job stays active until it
	// expires, then the sweep reclaims it.
	if time.Since(leasedAt) < lease-time.Second {
		require.Equal(t, "active", c.jobState(next, leased.JobID), "lease honoured after failover")
	}
	eventually(t, lease+10*time.Second, func() bool {
		return c.jobState(next, leased.JobID) != "active"
	}, "the expired lease is reclaimed by the new leader")
	require.GreaterOrEqual(t, time.Since(leasedAt), lease, "reclaimed only after it expired")

	for i := 0; i < 20; i++ {
		id, code := c.enqueue(c.followers(next)[0], "cluster", 2000+i)
		require.NotEmpty(t, id, "status %d", code)
		acked = append(acked, id)
	}

	// The killed node comes back from its own disk and catches up.
	c.start(leader.id, false)
	c.converged()
	c.allPresent(leader, acked, 15*time.Second)

	// Kill the whole cluster at once and start it again from disk.
	c.killAll()
	for _, id := range c.order { // nodes with state serve at once, leader or not
		c.start(id, false)
	}
	c.converged()
	for _, n := range c.running() {
		c.allPresent(n, acked, 15*time.Second)
	}
	id, code := c.enqueue(c.running()[0], "cluster", 9999)
	require.NotEmpty(t, id, "writes after the restart: status %d", code)
}

// TestShardClusterSnapshotCatchUpAndMembership compacts the log behind a
// snapshot, wipes a follower, removes it, and lets it join again empty:
// it catches up by installing the snapshot. Members are listed, removed
// and added with `jobbie shard members|remove|add`; a removed node stops
// by itself, whether it was running or down at the time.
func TestShardClusterSnapshotCatchUpAndMembership(t *testing.T) {
	t.Parallel()
	c := newShardCluster(t, 3, "--trailing-logs", "4", "--snapshot-threshold", "1000000")
	leader := c.leader()
	var acked []string
	for i := 0; i < 20; i++ {
		jobs := make([]map[string]any, 500)
		for j := range jobs {
			jobs[j] = map[string]any{"queue": "snap", "payload": map[string]int{"seq": i*500 + j}}
		}
		code, raw, err := c.do(leader, http.MethodPost, "/api/v1/enqueue/batch", map[string]any{"jobs": jobs})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code, string(raw))
		var r struct {
			JobIDs []string `json:"job_ids"`
		}
		require.NoError(t, json.Unmarshal(raw, &r))
		acked = append(acked, r.JobIDs...)
	}
	code, raw, err := c.do(leader, http.MethodPost, "/internal/v1/snapshot", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(raw))

	victim := c.followers(leader)[0]
	c.kill(victim.id)
	require.NoError(t, os.RemoveAll(victim.dir))
	require.Contains(t, c.cli("remove", victim.id, "--url", c.followers(leader)[0].http), "removed "+victim.id)
	out := c.cli("members", "--url", leader.http)
	require.NotContains(t, out, victim.id+" ")
	for i := 0; i < 5; i++ { // entries past the snapshot, still in the log
		id, _ := c.enqueue(leader, "snap", 5000+i)
		require.NotEmpty(t, id)
		acked = append(acked, id)
	}

	// The wiped node starts empty, asks to join, and is sent the snapshot.
	start := time.Now()
	c.start(victim.id, false)
	ls, _ := c.status(leader)
	eventually(t, 30*time.Second, func() bool {
		st, ok := c.status(victim)
		return ok && st.AppliedIndex >= ls.AppliedIndex
	}, "the wiped node catches up")
	t.Logf("wiped node caught up with %d jobs in %v", len(acked), time.Since(start))
	st, _ := c.status(victim)
	require.EqualValues(t, 1, st.Restores, "it caught up from a snapshot, not the log")
	c.allPresent(victim, acked, 10*time.Second)

	// Members by the CLI: all three voters, the returner among them; adding
	// it again changes nothing.
	var list struct {
		LeaderID string `json:"leader_id"`
		Members  []struct {
			NodeID   string `json:"node_id"`
			RaftAddr string `json:"raft_addr"`
			HTTPAddr string `json:"http_addr"`
			Voter    bool   `json:"voter"`
		} `json:"members"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.cli("add", "--url", victim.http, "--node-id", victim.id, "--raft-addr", victim.raft, "-o", "json")), &list))
	require.Len(t, list.Members, 3)
	require.Equal(t, leader.id, list.LeaderID)
	for _, m := range list.Members {
		require.True(t, m.Voter)
		require.Equal(t, c.nodes[m.NodeID].http, m.HTTPAddr)
	}
	table := c.cli("members", "--url", victim.http)
	require.Equal(t, 4, len(strings.Split(strings.TrimSpace(table), "\n")), table)
	require.Contains(t, table, "leader")

	// And it serves: a write through it is forwarded to the leader.
	id, code := c.enqueue(victim, "snap", 9999)
	require.NotEmpty(t, id, "status %d", code)
	require.Equal(t, "pending", c.jobState(victim, id))
	acked = append(acked, id)

	// A running member that is removed stops by itself, exit status 0, and
	// says how to bring it back; added again and restarted, it catches up.
	require.Contains(t, c.cli("remove", victim.id, "--url", leader.http), "removed "+victim.id)
	c.exitsByItself(victim, 10*time.Second, "the removed node still runs")
	logged, err := os.ReadFile(filepath.Join(c.dir, victim.id+".log"))
	require.NoError(t, err)
	require.Contains(t, string(logged), "node "+victim.id+" was removed from shard s1")
	c.cli("add", "--url", leader.http, "--node-id", victim.id, "--raft-addr", victim.raft)
	c.start(victim.id, false)
	c.converged()
	c.allPresent(victim, acked, 15*time.Second)

	// Removed while it is down, it restarts believing it is a member (its
	// log never saw the removal); once it has gone a while without a
	// leader it asks the leader, learns it was removed, and stops.
	c.kill(victim.id)
	require.Contains(t, c.cli("remove", victim.id, "--url", leader.http), "removed "+victim.id)
	c.start(victim.id, false)
	c.exitsByItself(victim, 15*time.Second, "the node removed while down still runs")
	id, code = c.enqueue(leader, "snap", 10000)
	require.NotEmpty(t, id, "the two left still write: status %d", code)
}

// TestShardClusterElectionTime kills the leader of a 3-node cluster (with
// the default 500ms Raft timeouts) several times and measures how long
// writes through a survivor stall: detection, election and the new
// leader's first commit.
func TestShardClusterElectionTime(t *testing.T) {
	t.Parallel()
	c := newShardCluster(t, 3)
	var times []time.Duration
	for round := 0; round < 5; round++ {
		leader := c.leader()
		via := c.followers(leader)[0]
		killed := time.Now()
		c.kill(leader.id)
		for i := 0; ; i++ {
			if id, code := c.enqueue(via, "elect", i); id != "" {
				break
			} else {
				require.Equal(t, http.StatusServiceUnavailable, code)
			}
			require.Less(t, time.Since(killed), 15*time.Second, "no new leader")
			time.Sleep(10 * time.Millisecond)
		}
		times = append(times, time.Since(killed))
		c.start(leader.id, false)
		c.converged()
	}
	slices.Sort(times)
	p50 := times[len(times)/2]
	t.Logf("writes resumed after a leader kill in %v (p50 %v, max %v)", times, p50, times[len(times)-1])
	require.Less(t, p50, 3*time.Second)
}
