package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

const restoredNS = "t_01hx0000000000000000000003/restored"

// backupOf takes a backup of ns as control and returns its raw stream.
func (b *bundle) backupOf(ns string) []byte {
	b.t.Helper()
	r := b.as(pkitest.Control).call("GET", "/internal/v1/backup", nil, wire.ShardNamespaceHeader, ns)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	require.Equal(b.t, wire.BackupContentType, r.Header.Get("Content-Type"))
	return r.Raw
}

// restoreInto posts a backup stream to ns as control.
func (b *bundle) restoreInto(ns, mode string, stream []byte) resp {
	b.t.Helper()
	return b.as(pkitest.Control).call("POST", "/internal/v1/restore?mode="+mode, stream, wire.ShardNamespaceHeader, ns,
		"Content-Type", wire.BackupContentType)
}

type streamRecords struct {
	header  backup.Header
	m       backup.Manifest
	records map[string]backup.Record // by key
}

func readStream(t *testing.T, raw []byte) streamRecords {
	t.Helper()
	r, err := backup.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	defer r.Close()
	out := streamRecords{header: r.Header(), records: map[string]backup.Record{}}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		out.records[string(rec.Key)] = rec
	}
	out.m, err = r.Manifest()
	require.NoError(t, err)
	return out
}

// fillAll is fill and the states it leaves out: retrying, cancelled, a
// queue with key_concurrency and a keyed job.
func (n *nsCaller) fillAll() {
	n.b.t.Helper()
	n.fill()
	retry := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "flaky", "max_retries": 3, "retry_backoff": "fixed", "retry_base_delay": "1h", "retry_max_delay": "1h"}, 201).Body["job_id"].(string)
	n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"flaky"}, "worker_id": "w", "timeout": 0}, 200)
	n.ok("POST", "/api/v1/fail/"+retry, map[string]any{"error": "again"}, 200)
	gone := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "flaky"}, 201).Body["job_id"].(string)
	n.ok("POST", "/api/v1/jobs/"+gone+"/cancel", nil, 200)
	n.ok("PUT", "/api/v1/queues/keyed", map[string]any{"key_concurrency": map[string]any{"max": 2}}, 200)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "keyed", "concurrency_key": "c1", "fairness_key": "f1"}, 201)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "keyed", "concurrency_key": "c1"}, 201)
	n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"keyed"}, "worker_id": "w", "timeout": 0}, 200)
}

// A namespace with jobs in every state, configured queues, schedules, a
// batch and a unique lock is backed up, restored into a fresh namespace
// and backed up again: the same records, but for the active jobs, which
// come back pending (attempt not counted) with their queue's counts and
// indexes; the restored jobs are fetched and acked; a second new restore
// is a conflict; a replace works; a corrupt stream changes nothing.
func TestBackupRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	src := b.in(testNS)
	src.fillAll()

	raw := b.backupOf(testNS)
	first := readStream(t, raw)
	require.Equal(t, "t_01hx0000000000000000000000", first.header.Tenant)
	require.Equal(t, "default", first.header.Namespace)
	require.Equal(t, b.srv.cfg.ShardID, first.header.ShardID)
	require.NotZero(t, first.header.RaftIndex)
	require.LessOrEqual(t, first.header.RaftIndex, b.srv.repl.AppliedIndex())
	var jobs, queues, schedules int
	active := map[string]bool{}
	for k, rec := range first.records {
		switch rec.Kind {
		case 'j':
			jobs++
			var j map[string]any
			if r := src.ok("GET", "/api/v1/jobs/"+k[1:], nil, 200); json.Unmarshal(r.Raw, &j) == nil && j["state"] == "active" {
				active[k[1:]] = true
			}
		case 'q':
			queues++
		case 's':
			schedules++
		}
	}
	require.EqualValues(t, jobs, first.m.Counts["jobs"])
	require.GreaterOrEqual(t, jobs, 12)
	require.Len(t, active, 2, "an img job and a keyed job are active")
	states := map[string]bool{}
	for k := range first.records {
		if first.records[k].Kind == 'j' {
			states[src.ok("GET", "/api/v1/jobs/"+k[1:], nil, 200).Body["state"].(string)] = true
		}
	}
	for _, s := range []string{"pending", "scheduled", "active", "retrying", "dead", "completed", "cancelled", "held"} {
		require.True(t, states[s], "no job %s in the backup", s)
	}

	r := b.restoreInto(restoredNS, wire.RestoreNew, raw)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var res wire.RestoreResult
	require.NoError(t, json.Unmarshal(r.Raw, &res))
	require.Equal(t, wire.RestoreResult{Records: int64(len(first.records)), Jobs: int64(jobs), Queues: int64(queues), Schedules: int64(schedules)}, res)

	second := readStream(t, b.backupOf(restoredNS))
	require.Equal(t, "restored", second.header.Namespace)
	for kind, n := range first.m.Counts {
		if kind != "indexes" { // a keyed job back in pending has a group entry more than its lease entry
			require.Equal(t, n, second.m.Counts[kind], kind)
		}
	}
	// What an active job touches may differ: its record, its index
	// entries (they end with its id), its queue's record and its
	// concurrency key's counts and its keyed group.
	touched := func(k string) bool {
		for id := range active {
			if bytes.HasSuffix([]byte(k), []byte(id)) {
				return true
			}
		}
		return k == "qimg" || k == "qkeyed" || k[0] == 'k' || k[0] == 'g'
	}
	for k, rec := range first.records {
		if !touched(k) {
			require.True(t, bytes.Equal(rec.Value, second.records[k].Value) && rec.Kind == second.records[k].Kind, "record %q", k)
		}
	}
	for k := range second.records {
		if !touched(k) {
			_, ok := first.records[k]
			require.True(t, ok, "record %q is new", k)
		}
	}
	dst := b.in(restoredNS)
	for id := range active {
		j := dst.ok("GET", "/api/v1/jobs/"+id, nil, 200).Body
		require.Equal(t, "pending", j["state"], "job %s", id)
	}
	// The requeued img job is fetched and acked in its new namespace.
	f := dst.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"img"}, "worker_id": "w9", "timeout": 0}, 200)
	require.True(t, active[f.Body["job_id"].(string)])
	dst.ok("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{"result": 1}, 200)

	// new into a namespace with data: 409, nothing changed.
	before := b.dumpRequests(restoredNS)
	r = b.restoreInto(restoredNS, wire.RestoreNew, raw)
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, "conflict", errCode(r))
	require.Equal(t, before, b.dumpRequests(restoredNS))
	// replace puts the backup back.
	r = b.restoreInto(restoredNS, wire.RestoreReplace, raw)
	require.Equal(t, 200, r.Status, string(r.Raw))
	third := readStream(t, b.backupOf(restoredNS))
	require.Equal(t, len(second.records), len(third.records), "the same records as the first restore")

	// A truncated or damaged stream: 400, nothing restored.
	const empty = "t_01hx0000000000000000000004/empty"
	for _, bad := range [][]byte{raw[:len(raw)-9], append(append([]byte{}, raw[:len(raw)/2]...), raw[len(raw)/2+1:]...), []byte("not a backup")} {
		r = b.restoreInto(empty, wire.RestoreNew, bad)
		require.Equal(t, 400, r.Status, string(r.Raw))
		require.Equal(t, "bad_request", errCode(r))
		require.Empty(t, b.dump(empty))
	}
	r = b.restoreInto(empty, "sideways", raw)
	require.Equal(t, 400, r.Status, string(r.Raw))

	// A namespace with no data backs up as a valid empty backup.
	none := readStream(t, b.backupOf(empty))
	require.Empty(t, none.records)
	require.Zero(t, none.m.Counts["jobs"])
}

// Only control may back up or restore: a gateway, a shard member and an
// operator get 403.
func TestBackupRoutesAreControlOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.in(testNS).fill()
	raw := b.backupOf(testNS)
	for _, who := range []*bundle{b, b.as(pkitest.Operator), b.as(pkitest.Shard("s1", "n2"))} {
		r := who.call("GET", "/internal/v1/backup", nil)
		require.Equal(t, 403, r.Status, string(r.Raw))
		r = who.call("POST", "/internal/v1/restore?mode=new", raw, wire.ShardNamespaceHeader, restoredNS)
		require.Equal(t, 403, r.Status, string(r.Raw))
	}
	require.Empty(t, b.dump(restoredNS))
}

// While a restore holds a namespace, its API answers 503 with
// Retry-After; deleting it is let through (it ends an interrupted
// restore), and the namespace answers again after.
func TestRestoringNamespaceAnswers503(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := engine.RestoreBegin.Propose(ctx, b.srv.repl, &engine.RestoreBeginCmd{NS: testNS, Token: "t"})
	require.NoError(t, err)
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"})
	require.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Raw))
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	b.in(otherTestNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
	b.in(testNS).ok("DELETE", "/api/v1/namespace", nil, 204)
	b.in(testNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
}

// A fetch parked on a queue of the namespace before a restore gets a
// restored job as soon as the restore ends.
func TestRestoreWakesParkedFetches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.in(testNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201).Body["job_id"].(string)
	raw := b.backupOf(testNS)
	dst := b.in(restoredNS)
	got := make(chan resp, 1)
	go func() {
		got <- dst.call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "w", "timeout": 20})
	}()
	eventually(t, 5*time.Second, func() bool { return b.srv.waiters.Parked(restoredNS, "q") == 1 }, "the fetch parks")
	r := b.restoreInto(restoredNS, wire.RestoreNew, raw)
	require.Equal(t, 200, r.Status, string(r.Raw))
	select {
	case f := <-got:
		require.Equal(t, 200, f.Status, string(f.Raw))
		require.Equal(t, id, f.Body["job_id"])
	case <-time.After(10 * time.Second):
		t.Fatal("the parked fetch was not woken by the restore")
	}
}

// On a follower, backup and restore answer 503 no_leader naming the
// leader (a stream is not proxied); the follower holds the restored
// records once the leader restored them.
func TestBackupOnAFollowerNamesTheLeader(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 2)
	leader, follower := g.leaderAndFollower()
	leader.in(testNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
	for _, r := range []resp{
		follower.as(pkitest.Control).call("GET", "/internal/v1/backup", nil),
		follower.restoreInto(restoredNS, wire.RestoreNew, []byte("x")),
	} {
		require.Equal(t, 503, r.Status, string(r.Raw))
		require.Equal(t, "no_leader", errCode(r))
		require.Equal(t, leader.srv.Addr(), r.Header.Get(wire.LeaderHeader))
	}
	r := leader.restoreInto(restoredNS, wire.RestoreNew, leader.backupOf(testNS))
	require.Equal(t, 200, r.Status, string(r.Raw))
	eventually(t, 10*time.Second, func() bool { return bytes.Equal(leader.dump(restoredNS), follower.dump(restoredNS)) }, "the follower applies the restore")
}

// A node restarted in the middle of a restore still holds the namespace
// restoring (503); a new restore takes it over and completes.
func TestRestoreMarkSurvivesARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := start(t, dir)
	b.in(testNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
	raw := b.backupOf(testNS)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := engine.RestoreBegin.Propose(ctx, b.srv.repl, &engine.RestoreBeginCmd{NS: restoredNS, Token: "gone"})
	require.NoError(t, err)
	_, err = engine.RestoreChunk.Propose(ctx, b.srv.repl, &engine.RestoreChunkCmd{NS: restoredNS, Token: "gone",
		Recs: []engine.RestoreRecord{{Key: []byte("qleft"), Value: []byte{0x80}}}})
	require.NoError(t, err)
	require.NoError(t, b.srv.repl.Snapshot())
	require.NoError(t, b.srv.Stop())

	b = start(t, dir)
	r := b.in(restoredNS).call("GET", "/api/v1/queues", nil)
	require.Equal(t, 503, r.Status, string(r.Raw))
	r = b.restoreInto(restoredNS, wire.RestoreNew, raw)
	require.Equal(t, 200, r.Status, string(r.Raw))
	b.in(restoredNS).ok("GET", "/api/v1/queues", nil, 200)
	require.NotContains(t, string(b.dump(restoredNS)), fmt.Sprintf("%x", append(keys.Namespace(restoredNS), "qleft"...)), "what the interrupted restore wrote is gone")
}
