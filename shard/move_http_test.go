package shard

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// mv calls a move route of b as control, in ns, under token.
func (b *bundle) mv(method, route, ns, token string, body any) resp {
	b.t.Helper()
	return b.as(pkitest.Control).call(method, "/internal/v1/move/"+route, body,
		wire.ShardNamespaceHeader, ns, wire.MoveTokenHeader, token)
}

func (b *bundle) mvOK(method, route, ns, token string, body any) resp {
	b.t.Helper()
	r := b.mv(method, route, ns, token, body)
	require.Equal(b.t, 200, r.Status, "%s %s: %s", method, route, r.Raw)
	return r
}

// copyStream sends a stream from the source to the target's apply, as
// control pipes it, and returns the target's answer.
func copyStream(t *testing.T, src, dst *bundle, route, token string) (streamRecords, map[string]any) {
	t.Helper()
	raw := src.mvOK("GET", route, testNS, token, nil).Raw
	recs := readStream(t, raw)
	r := dst.mv("POST", "apply", testNS, token, raw)
	require.Equal(t, 200, r.Status, string(r.Raw))
	return recs, r.Body
}

func requireMovingAnswer(t *testing.T, r resp, state string) {
	t.Helper()
	require.Equal(t, 503, r.Status, string(r.Raw))
	require.Equal(t, "namespace_moving", errCode(r))
	require.Equal(t, state, r.Header.Get(wire.MovingHeader))
	require.Equal(t, "1", r.Header.Get("Retry-After"))
}

// A namespace with jobs in every state (active ones with leases, a
// scheduled one, a schedule, a batch, a unique lock, a keyed queue) moves
// between two real shards as control drives it: snapshot, more writes,
// a delta with deletions, the fence (writes and a parked fetch answer 503
// namespace_moving), a last delta, end, finish. The target then holds the
// source's last records exactly; the active job is acked there under its
// lease; the source answers "moved".
func TestMoveBetweenShards(t *testing.T) {
	t.Parallel()
	src, dst := setup(t), setup(t)
	s, d := src.in(testNS), dst.in(testNS)
	s.fillAll()
	keyed := src.keyed(testNS, "POST", "/api/v1/enqueue", "moved-key", map[string]any{"queue": "kq"})
	require.Equal(t, 201, keyed.Status, string(keyed.Raw))
	const tok = "mov_01JD0000000000000000000001"

	// Only control calls the routes.
	r := src.call("GET", "/internal/v1/move/snapshot", nil, wire.MoveTokenHeader, tok)
	require.Equal(t, 403, r.Status, string(r.Raw))
	r = dst.as(pkitest.Operator).call("POST", "/internal/v1/move/begin", nil, wire.MoveTokenHeader, tok)
	require.Equal(t, 403, r.Status, string(r.Raw))

	dst.mvOK("POST", "begin", testNS, tok, nil)
	r = d.call("GET", "/api/v1/queues", nil)
	require.Equal(t, 503, r.Status, "the target answers 503 while it holds the move")
	snap, applied := copyStream(t, src, dst, "snapshot", tok)
	require.False(t, snap.header.Delta)
	require.EqualValues(t, len(snap.records), applied["records"])
	require.EqualValues(t, 0, applied["deletes"])
	require.Positive(t, applied["bytes"])

	// More writes: a new job, an ack, a deleted job, a new queue setting.
	fresh := s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "late", "unique_key": "late-1"}, 201).Body["job_id"].(string)
	later := s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "later2", "scheduled_at": "2030-01-01T00:00:00Z"}, 201).Body["job_id"].(string)
	s.ok("DELETE", "/api/v1/jobs/"+later, nil, 204)
	f := s.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"late"}, "worker_id": "w", "timeout": 0}, 200)
	require.Equal(t, fresh, f.Body["job_id"])
	s.ok("POST", "/api/v1/ack/"+fresh, map[string]any{"result": 2}, 200)
	var gone string
	for k, rec := range snap.records {
		if rec.Kind == 'j' && s.ok("GET", "/api/v1/jobs/"+k[1:], nil, 200).Body["state"] == "scheduled" {
			gone = k[1:]
		}
	}
	require.NotEmpty(t, gone)
	s.ok("DELETE", "/api/v1/jobs/"+gone, nil, 204)
	s.ok("PUT", "/api/v1/queues/emails", map[string]any{"description": "changed", "concurrency": 3}, 200)

	delta, applied := copyStream(t, src, dst, "delta", tok)
	require.True(t, delta.header.Delta)
	require.True(t, delta.m.Delta)
	require.Positive(t, delta.m.Counts["deletes"])
	require.EqualValues(t, delta.m.Counts["deletes"], applied["deletes"])
	require.EqualValues(t, int(delta.m.Records-delta.m.Counts["deletes"]), applied["records"])
	require.Contains(t, delta.records, "j"+gone)
	require.Equal(t, byte('-'), delta.records["j"+gone].Kind)
	require.Less(t, len(delta.records), len(snap.records), "a delta holds only what changed")

	events := src.stream() // open through the fence, ended by the finish
	require.Equal(t, "jobbie events", events.next().Comment)

	// A fetch parks on the source; the fence wakes it with 503.
	parked := make(chan resp, 1)
	go func() {
		parked <- s.call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"idle"}, "worker_id": "w3", "timeout": 20})
	}()
	eventually(t, 5*time.Second, func() bool { return src.srv.waiters.Parked(testNS, "idle") == 1 }, "the fetch parks")
	fenced := src.mvOK("POST", "fence", testNS, tok, map[string]any{"ttl_ms": 30000})
	until, err := time.Parse(time.RFC3339Nano, fenced.Body["fenced_until"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(30*time.Second), until, 10*time.Second)
	select {
	case r := <-parked:
		requireMovingAnswer(t, r, wire.MovingFenced)
	case <-time.After(10 * time.Second):
		t.Fatal("the parked fetch was not woken by the fence")
	}
	requireMovingAnswer(t, s.call("POST", "/api/v1/enqueue", map[string]any{"queue": "late"}), wire.MovingFenced)
	requireMovingAnswer(t, s.call("GET", "/api/v1/jobs/"+fresh, nil), wire.MovingFenced)
	r = src.mv("POST", "fence", testNS, "mov_other", map[string]any{"ttl_ms": 30000})
	require.Equal(t, 409, r.Status, "another move's fence: %s", r.Raw)
	src.in(otherTestNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201) // others go on

	last, _ := copyStream(t, src, dst, "delta", tok)
	require.True(t, last.m.Delta)
	before := readStream(t, src.backupOf(testNS))

	dst.mvOK("POST", "end", testNS, tok, nil)
	after := readStream(t, dst.backupOf(testNS))
	require.Equal(t, len(before.records), len(after.records))
	for k, rec := range before.records {
		got, ok := after.records[k]
		require.True(t, ok, "record %q missing at the target", k)
		require.Equal(t, rec.Kind, got.Kind, k)
		require.True(t, bytes.Equal(rec.Value, got.Value), "record %q differs", k)
	}
	require.Equal(t, before.m.Counts, after.m.Counts)

	// Placement switches (control); the source's copy goes, and its
	// event streams end (their clients reconnect, to the target).
	src.mvOK("POST", "finish", testNS, tok, map[string]any{"to_shard": "s2"})
	require.Contains(t, events.next().Comment, "moved to another shard")
	_, err = events.rd.ReadString('\n')
	require.Error(t, err, "the event stream ended")
	src.mvOK("POST", "finish", testNS, tok, map[string]any{"to_shard": "s2"}) // idempotent
	require.Empty(t, src.dump(testNS))
	for _, c := range []struct{ method, path string }{{"GET", "/api/v1/queues"}, {"POST", "/api/v1/enqueue"}, {"DELETE", "/api/v1/namespace"}, {"GET", "/api/v1/jobs/" + fresh}} {
		requireMovingAnswer(t, s.call(c.method, c.path, map[string]any{"queue": "q"}), wire.MovingMoved)
	}
	r = src.mv("GET", "delta", testNS, tok, nil)
	require.Equal(t, 409, r.Status, "the session went with the finish: %s", r.Raw)
	require.Zero(t, src.srv.Service().MoveSessions())

	// At the target: the active jobs are still active under their lease,
	// and their worker acks them there.
	var active []string
	for k, rec := range before.records {
		if rec.Kind == 'j' {
			j := d.ok("GET", "/api/v1/jobs/"+k[1:], nil, 200).Body
			if j["state"] == "active" {
				active = append(active, k[1:])
			}
		}
	}
	require.Len(t, active, 2, "an img job and a keyed job stay active")
	for _, id := range active {
		d.ok("POST", "/api/v1/ack/"+id, map[string]any{"result": 1}, 200)
		j := d.ok("GET", "/api/v1/jobs/"+id, nil, 200).Body
		require.Equal(t, "completed", j["state"])
		require.EqualValues(t, 1, j["attempt"], "the attempt it ran is the one acked")
	}
	require.Equal(t, "changed", d.ok("GET", "/api/v1/queues/emails", nil, 200).Body["description"])
	// The unique lock held: nothing created. The schedules are there.
	d.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "emails", "unique_key": "u"}, 200)
	require.Contains(t, string(d.ok("GET", "/api/v1/schedules", nil, 200).Raw), `"nightly"`)
	// An Idempotency-Key's record moved with the job it made.
	again := dst.keyed(testNS, "POST", "/api/v1/enqueue", "moved-key", map[string]any{"queue": "kq"})
	require.Equal(t, 200, again.Status, string(again.Raw))
	require.Equal(t, keyed.Body["job_id"], again.Body["job_id"])

	// A move back into the source clears its tombstone.
	src.mvOK("POST", "begin", testNS, "mov_back", nil)
	src.mvOK("POST", "abort", testNS, "mov_back", nil)
	src.mvOK("POST", "abort", testNS, "mov_back", nil) // idempotent
	s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
}

// Every move route refuses a missing namespace or token (400), a step of
// another move (409) and a ttl out of range (400), changing nothing.
func TestMoveRoutesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	n := b.in(testNS)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
	const tok = "mov_1"
	routes := []struct{ method, route string }{
		{"GET", "snapshot"}, {"GET", "delta"}, {"POST", "fence"}, {"POST", "unfence"}, {"POST", "finish"},
		{"POST", "begin"}, {"POST", "apply"}, {"POST", "end"}, {"POST", "abort"},
	}
	body := map[string]any{"ttl_ms": 5000, "to_shard": "s2"}
	before := b.dumpRequests(testNS)
	for _, rt := range routes {
		var bdy any = body
		if rt.method == "GET" || rt.route == "apply" {
			bdy = nil
		}
		if rt.route == "fence" {
			bdy = map[string]any{"ttl_ms": 5000}
		} else if rt.route == "finish" {
			bdy = map[string]any{"to_shard": "s2"}
		}
		r := b.mv(rt.method, rt.route, "", tok, bdy)
		require.Equal(t, 400, r.Status, "%s without a namespace: %s", rt.route, r.Raw)
		require.Equal(t, wire.ShardNamespaceHeader, errField(r), rt.route)
		r = b.mv(rt.method, rt.route, testNS, "", bdy)
		require.Equal(t, 400, r.Status, "%s without a token: %s", rt.route, r.Raw)
		require.Equal(t, wire.MoveTokenHeader, errField(r), rt.route)
		r = b.mv(rt.method, rt.route, testNS, "bad token!", bdy)
		require.Equal(t, 400, r.Status, "%s with a malformed token: %s", rt.route, r.Raw)
	}
	require.Equal(t, before, b.dumpRequests(testNS))

	// The fence's ttl and body.
	for _, bad := range []any{map[string]any{}, map[string]any{"ttl_ms": 999}, map[string]any{"ttl_ms": 120001},
		map[string]any{"ttl_ms": -1}, map[string]any{"ttl_ms": 1 << 62}, map[string]any{"ttl_ms": 5000, "extra": 1}, "not json"} {
		r := b.mv("POST", "fence", testNS, tok, bad)
		require.Equal(t, 400, r.Status, "fence %v: %s", bad, r.Raw)
	}
	require.Empty(t, b.srv.Service().Moving(testNS))
	r := b.mv("POST", "finish", testNS, tok, map[string]any{})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "to_shard", errField(r))
	r = b.mv("POST", "finish", testNS, tok, map[string]any{"to_shard": "s2"})
	require.Equal(t, 409, r.Status, "finish without a fence: %s", r.Raw)
	require.Equal(t, before, b.dumpRequests(testNS))

	// Another move's steps: 409.
	r = b.mv("GET", "delta", testNS, tok, nil)
	require.Equal(t, 409, r.Status, "a delta with no session: %s", r.Raw)
	b.mvOK("GET", "snapshot", testNS, tok, nil)
	r = b.mv("GET", "delta", testNS, "mov_2", nil)
	require.Equal(t, 409, r.Status, "a delta of another move: %s", r.Raw)
	b.mvOK("POST", "fence", testNS, tok, map[string]any{"ttl_ms": 5000})
	r = b.mv("POST", "fence", testNS, "mov_2", map[string]any{"ttl_ms": 5000})
	require.Equal(t, 409, r.Status, "another move's fence: %s", r.Raw)
	b.mvOK("POST", "unfence", testNS, "mov_2", nil) // not its fence: nothing to lift
	require.Equal(t, wire.MovingFenced, b.srv.Service().Moving(testNS))
	b.mvOK("POST", "unfence", testNS, tok, nil)
	b.mvOK("POST", "unfence", testNS, tok, nil)
	require.Empty(t, b.srv.Service().Moving(testNS))
	require.Zero(t, b.srv.Service().MoveSessions(), "the unfence dropped the session")

	// The target: a namespace with data is not begun; apply and end of
	// another move, and a corrupt stream, are refused.
	r = b.mv("POST", "begin", testNS, tok, nil)
	require.Equal(t, 409, r.Status, "begin into a namespace with data: %s", r.Raw)
	const into = "t_01hx0000000000000000000005/into"
	stream := b.mvOK("GET", "snapshot", testNS, tok, nil).Raw
	r = b.mv("POST", "apply", into, tok, stream)
	require.Equal(t, 409, r.Status, "apply before begin: %s", r.Raw)
	b.mvOK("POST", "begin", into, tok, nil)
	r = b.mv("POST", "apply", into, "mov_2", stream)
	require.Equal(t, 409, r.Status, "apply of another move: %s", r.Raw)
	r = b.mv("POST", "end", into, "mov_2", nil)
	require.Equal(t, 409, r.Status, "end of another move: %s", r.Raw)
	for _, bad := range [][]byte{stream[:len(stream)-5], []byte("not a stream"), nil} {
		r = b.mv("POST", "apply", into, tok, bad)
		require.Equal(t, 400, r.Status, "a corrupt stream: %s", r.Raw)
	}
	require.Empty(t, b.dump(into))
	b.mvOK("POST", "abort", into, "mov_2", nil) // not its move: nothing to abort
	require.True(t, b.srv.Service().Restoring(into))
	b.mvOK("POST", "abort", into, tok, nil)
	require.False(t, b.srv.Service().Restoring(into))
}

// A three-node source: the move routes answer 503 no_leader naming the
// leader on a follower; the fence and the moved tombstone are replicated,
// so a follower refuses the namespace too, with the same header; the
// target ends equal to the source.
func TestMoveFromAThreeNodeShard(t *testing.T) {
	t.Parallel()
	// Filled while it is one node, then grown to three: a write through a
	// group may meet an election on a loaded machine and get 503 "may or
	// may not have been applied", which the filling cannot send again
	// blindly.
	g := newShardGroup(t, 1)
	dst := setup(t)
	g.nodes[0].in(testNS).fillAll()
	g.grow(3)
	// The leader keeps a move's session in its memory: when the lead moves
	// mid-move (an election on a loaded machine), the old leader answers
	// 503 no_leader and the new one 409 (no session: start over), and
	// control aborts the move and starts it over, as here.
	for attempt := 1; ; attempt++ {
		tok := fmt.Sprint("mov_3_", attempt)
		if moveFromGroup(t, g, dst, tok) {
			return
		}
		require.Less(t, attempt, 5, "the lead moved during every attempt")
		dst.mvOK("POST", "abort", testNS, tok, nil)
		eventually(t, 20*time.Second, func() bool {
			leader, _ := g.leaderAndFollower()
			return leader.mv("POST", "unfence", testNS, tok, nil).Status == 200
		}, "the source lifts the fence of the move it gave up")
	}
}

// moveFromGroup moves testNS from g to dst under tok and checks the
// source's followers on the way; false if the lead moved meanwhile.
func moveFromGroup(t *testing.T, g *shardGroup, dst *bundle, tok string) bool {
	t.Helper()
	leader, follower := g.leaderAndFollower()
	// leaderMv calls the leader; false once it no longer leads.
	leaderMv := func(method, route string, body any) (resp, bool) {
		t.Helper()
		r := leader.mv(method, route, testNS, tok, body)
		if (r.Status == 503 && errCode(r) == "no_leader") || r.Status == 409 {
			return r, false
		}
		require.Equal(t, 200, r.Status, "%s %s: %s", method, route, r.Raw)
		return r, true
	}
	// copied copies a stream from the leader to dst, as control pipes it.
	copied := func(route string) (streamRecords, bool) {
		t.Helper()
		r, ok := leaderMv("GET", route, nil)
		if !ok {
			return streamRecords{}, false
		}
		a := dst.mv("POST", "apply", testNS, tok, r.Raw)
		require.Equal(t, 200, a.Status, string(a.Raw))
		return readStream(t, r.Raw), true
	}
	r := follower.mv("GET", "snapshot", testNS, tok, nil)
	if r.Status != 503 || r.Header.Get(wire.LeaderHeader) != leader.srv.Addr() {
		return false // the follower leads now, or names another leader
	}
	require.Equal(t, "no_leader", errCode(r))

	dst.mvOK("POST", "begin", testNS, tok, nil)
	if _, ok := copied("snapshot"); !ok {
		return false
	}
	created(t, retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "more"}, wire.ShardNamespaceHeader, testNS))
	if _, ok := leaderMv("POST", "fence", map[string]any{"ttl_ms": 60000}); !ok {
		return false
	}
	eventually(t, 10*time.Second, func() bool { return follower.srv.Service().Moving(testNS) == wire.MovingFenced }, "the follower applies the fence")
	requireMovingAnswer(t, follower.in(testNS).call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}), wire.MovingFenced)
	requireMovingAnswer(t, follower.in(testNS).call("GET", "/api/v1/queues", nil), wire.MovingFenced)
	last, ok := copied("delta")
	if !ok {
		return false
	}
	require.NotEmpty(t, last.records)
	b := leader.as(pkitest.Control).call("GET", "/internal/v1/backup", nil, wire.ShardNamespaceHeader, testNS)
	if b.Status == 503 && errCode(b) == "no_leader" {
		return false
	}
	require.Equal(t, 200, b.Status, string(b.Raw))
	before := readStream(t, b.Raw)
	dst.mvOK("POST", "end", testNS, tok, nil)
	after := readStream(t, dst.backupOf(testNS))
	require.Equal(t, before.records, after.records)

	if _, ok := leaderMv("POST", "finish", map[string]any{"to_shard": "s2"}); !ok {
		return false
	}
	eventually(t, 10*time.Second, func() bool { return follower.srv.Service().Moving(testNS) == wire.MovingMoved }, "the follower applies the finish")
	requireMovingAnswer(t, follower.in(testNS).call("GET", "/api/v1/queues", nil), wire.MovingMoved)
	eventually(t, 10*time.Second, func() bool { return len(follower.dump(testNS)) == 0 }, "the follower's copy goes")
	return true
}

// While a fence holds a namespace the leader's loops leave it alone (a
// job coming due stays scheduled) and go on with the others; once the
// fence is lifted they catch up. A fence lapses by itself at its ttl.
func TestFenceHoldsTheLeadersLoops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	due := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	id := b.in(testNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "scheduled_at": due}, 201).Body["job_id"].(string)
	other := b.in(otherTestNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "scheduled_at": due}, 201).Body["job_id"].(string)
	b.mvOK("POST", "fence", testNS, "mov_1", map[string]any{"ttl_ms": 60000})
	eventually(t, 10*time.Second, func() bool {
		return b.in(otherTestNS).ok("GET", "/api/v1/jobs/"+other, nil, 200).Body["state"] == "pending"
	}, "the other namespace's job is promoted")
	time.Sleep(200 * time.Millisecond) // a few more sweeps
	j, err := engine.ReadJob(b.srv.repl.DB(), testNS, id)
	require.NoError(t, err)
	require.Equal(t, job.Scheduled, j.State, "the fenced namespace's job waits")
	b.mvOK("POST", "unfence", testNS, "mov_1", nil)
	eventually(t, 10*time.Second, func() bool {
		return b.in(testNS).ok("GET", "/api/v1/jobs/"+id, nil, 200).Body["state"] == "pending"
	}, "the job is promoted once the fence is lifted")

	b.mvOK("POST", "fence", testNS, "mov_2", map[string]any{"ttl_ms": 1000})
	requireMovingAnswer(t, b.in(testNS).call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}), wire.MovingFenced)
	eventually(t, 10*time.Second, func() bool {
		return b.in(testNS).call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}).Status == 201
	}, "the fence lapses")
}

// holdingWriter passes writes on to a buffer; its first write signals
// first and waits for release.
type holdingWriter struct {
	bytes.Buffer
	first, release chan struct{}
}

func (w *holdingWriter) Write(p []byte) (int, error) {
	if w.Len() == 0 {
		close(w.first)
		<-w.release
	}
	return w.Buffer.Write(p)
}

// A move's reader may hold the whole snapshot stream, and ask for the
// delta on another connection, before the call that wrote the stream has
// returned: the session exists from the stream's first byte, and the
// delta waits for it to be complete instead of answering that there is no
// session. A snapshot that fails leaves no session.
func TestMoveDeltaRacingTheSnapshotsEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.in(testNS).ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201)
	svc := b.srv.Service()
	const tok = "mov_race"
	src := service.BackupSource{ShardID: "s1", Now: time.Now()}
	w := &holdingWriter{first: make(chan struct{}), release: make(chan struct{})}
	snapErr := make(chan error, 1)
	go func() {
		_, err := svc.MoveSnapshot(testNS, tok, src, w)
		snapErr <- err
	}()
	<-w.first
	require.NoError(t, svc.MoveSessionOK(testNS, tok), "the session is there while its snapshot streams")
	var delta bytes.Buffer
	deltaErr := make(chan error, 1)
	go func() {
		_, err := svc.MoveDelta(testNS, tok, src, &delta)
		deltaErr <- err
	}()
	close(w.release)
	require.NoError(t, <-snapErr)
	require.NoError(t, <-deltaErr, "the delta waited for its snapshot")
	require.True(t, readStream(t, delta.Bytes()).header.Delta, "a delta stream")

	// A snapshot whose writer fails drops the session it opened.
	_, err := svc.MoveSnapshot(testNS, tok, src, failingWriter{})
	require.Error(t, err)
	require.ErrorIs(t, svc.MoveSessionOK(testNS, tok), service.ErrMoveSessionGone)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
