package control

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// In a 3-node group sharing one store, a backup asked of a follower is
// taken by the leader, and a policy goes on running after the leader
// stops: the next leader takes the following runs, and every backup is
// complete and readable through any node.
func TestGroupBackupsOnTheLeaderAcrossALeaderChange(t *testing.T) {
	t.Parallel()
	g := startGroup(t, 0)
	shard := newFakeBackupShard(t, g.ca, pkitest.Shard("s1", "n1"))
	store, err := backup.NewDirStore(t.TempDir())
	require.NoError(t, err)
	opts := func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: "https://" + shard.addr}}
		c.PullInterval = -1
		c.BackupStore = store
		// A loaded machine may elect again mid-run: the next leader then
		// fails the backup left running as interrupted soon, not after
		// the default 10 s, and takeBackupThrough takes another.
		c.BackupOrphanAfter = 300 * time.Millisecond
	}
	for _, id := range []string{"control1", "control2", "control3"} {
		g.add(t, id, opts)
	}
	first := g.leader(t, "")
	tid := tenantThrough(t, g.on(t, first, pkitest.Operator), "acme")
	follower := "control1"
	if follower == first {
		follower = "control2"
	}
	gw := g.on(t, follower, pkitest.Gateway)
	postThrough(t, gw, "/internal/v1/tenants/"+tid+"/namespaces", "namespace-orders", wire.CreateNamespaceRequest{Name: "orders"}, http.StatusCreated)
	shard.put(tid, "orders", sampleRecords("a")...)

	id := takeBackupThrough(t, gw, g.nodes[first], tid, "orders")

	// A download asked of a follower streams from the leader.
	dl := readThrough(t, gw, "/internal/v1/tenants/"+tid+"/backups/"+id+"/download")
	require.Equal(t, http.StatusOK, dl.status, "body: %s", dl.body)
	require.Equal(t, wire.BackupContentType, dl.header.Get("Content-Type"))
	rc, err := store.Get(context.Background(), tid+"/"+id)
	require.NoError(t, err)
	stored, err := io.ReadAll(rc)
	require.NoError(t, rc.Close())
	require.NoError(t, err)
	require.Equal(t, stored, dl.body)
	requireError(t, readThrough(t, gw, "/internal/v1/tenants/"+tid+"/backups/bkp_nope/download"), 404, "not_found")

	// Setting a policy is safe to repeat, whatever a 503 says.
	var r response
	require.Eventually(t, func() bool {
		r = gw.do(t, http.MethodPut, "/internal/v1/tenants/"+tid+"/namespaces/orders/backup-policy", "", wire.BackupPolicyRequest{Cron: "@every 1s", Retention: 1000})
		return r.status != http.StatusServiceUnavailable
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	scheduled := func(srv *Server) (n int) {
		list, err := srv.Backups(context.Background(), tid, nil)
		require.NoError(t, err)
		for _, b := range list {
			if b.Kind == wire.BackupScheduled && b.State == wire.BackupCompleted {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return scheduled(g.nodes[first]) >= 2 }, 20*time.Second, 20*time.Millisecond)

	require.NoError(t, g.nodes[first].Stop())
	delete(g.nodes, first)
	next := g.leader(t, first)
	before := scheduled(g.nodes[next])
	require.Eventually(t, func() bool { return scheduled(g.nodes[next]) >= before+2 }, 30*time.Second, 20*time.Millisecond)

	// Every backup ended; each completed one is in the store, whole.
	list, err := g.nodes[next].Backups(context.Background(), tid, nil)
	require.NoError(t, err)
	for _, b := range list {
		if b.State != wire.BackupCompleted {
			continue
		}
		m, err := store.Manifest(context.Background(), tid+"/"+b.ID)
		require.NoError(t, err, b.ID)
		require.Equal(t, b.Checksum, m.SHA256)
		require.Equal(t, uint64(7), m.Records)
	}
}

// takeBackupThrough asks node gw for a manual backup of namespace ns and
// returns it once completed, as a client would do it through elections:
// a backup a leader change interrupted (failed, "interrupted: …") is
// taken again under a new key. srv is any node, read from its own state.
func takeBackupThrough(t *testing.T, gw *bundle, srv *Server, tid, ns string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		require.LessOrEqual(t, attempt, 5, "every backup was interrupted")
		key := fmt.Sprintf("backup-%s-%d", ns, attempt)
		r := postThrough(t, gw, "/internal/v1/tenants/"+tid+"/backups", key, wire.CreateBackupRequest{Namespace: ns}, http.StatusAccepted)
		id := decodeAs[wire.Backup](t, r).ID
		var b wire.Backup
		require.Eventually(t, func() bool {
			var err error
			b, err = srv.Backup(context.Background(), tid, id)
			return err == nil && b.State != wire.BackupRunning
		}, 20*time.Second, 20*time.Millisecond)
		if b.State == wire.BackupCompleted {
			return id
		}
		require.True(t, strings.HasPrefix(b.Error, "interrupted: "), "backup %s: %s %s", id, b.State, b.Error)
		t.Logf("backup %s %s; taking another", id, b.Error)
	}
}

// postThrough POSTs a create to node gw under Idempotency-Key key, asked
// again under the same key while the answer is 503: no_leader changed
// nothing, but unavailable (the leader changed while the create was being
// replicated, or the forward's answer was lost) may have applied it, and
// a bare repeat would then be refused (409 "one at a time" for a backup).
// The answer is want, or 200 replaying the first create.
func postThrough(t *testing.T, gw *bundle, path, key string, body any, want int) response {
	t.Helper()
	var r response
	require.Eventually(t, func() bool {
		r = gw.do(t, http.MethodPost, path, "", body, wire.IdempotencyKeyHeader, key)
		return r.status != http.StatusServiceUnavailable
	}, 20*time.Second, 50*time.Millisecond)
	if r.header.Get(wire.IdempotencyReplayedHeader) == "true" {
		want = http.StatusOK
	}
	require.Equal(t, want, r.status, "body: %s", r.body)
	return r
}

// readThrough GETs path of node gw, asked again while the answer is 503
// (a read changes nothing): an election may come at any time on a loaded
// machine.
func readThrough(t *testing.T, gw *bundle, path string) response {
	t.Helper()
	var r response
	require.Eventually(t, func() bool {
		r = gw.do(t, http.MethodGet, path, "", nil)
		return r.status != http.StatusServiceUnavailable
	}, 20*time.Second, 50*time.Millisecond)
	return r
}
