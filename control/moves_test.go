package control

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/leader"
	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// moveWorld is a control node with two fake shards, s1 (where namespace
// "orders" is placed) and s2, called as the operator.
type moveWorld struct {
	*bundle
	src, dst *fakeMoveShard
	tid, sns string
}

func moveSetup(t *testing.T, opts ...func(*Config)) *moveWorld {
	t.Helper()
	ca := pkitest.New(t)
	src := newFakeMoveShard(t, ca, pkitest.Shard("s2", "n1"))
	dst := newFakeMoveShard(t, ca, pkitest.Shard("s1", "n1"))
	cfg := testConfig(t, ca, append([]func(*Config){noPulls, func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s2", Addr: "https://" + src.addr}, {ID: "s1", Addr: "https://" + dst.addr}}
	}}, opts...)...)
	srv := startServer(t, cfg)
	op, err := srv.IssueOperatorKey(context.Background(), "ops")
	require.NoError(t, err)
	w := &moveWorld{bundle: &bundle{srv: srv, cfg: cfg, ca: ca, base: "https://" + srv.Addr(), op: op, client: clientWith(ca.Anonymous(t))},
		src: src, dst: dst}
	w.tid = mustTenant(t, srv, "acme")
	ns, err := srv.CreateNamespace(context.Background(), w.tid, "orders")
	require.NoError(t, err)
	require.Equal(t, "s2", ns.ShardID)
	w.sns = tenancy.ShardNamespace(w.tid, "orders")
	return w
}

// start starts a move of orders to s2 through the API.
func (w *moveWorld) start(t *testing.T) wire.Move {
	t.Helper()
	r := w.do(t, http.MethodPost, "/control/v1/namespaces/"+w.tid+"/orders/move", w.op, wire.NamespaceMoveRequest{ToShard: "s1"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	m := decodeAs[wire.Move](t, r)
	require.Equal(t, wire.MoveCopying, m.State)
	require.Equal(t, "s2", m.FromShard)
	require.Equal(t, "s1", m.ToShard)
	return m
}

func (w *moveWorld) get(t *testing.T, id string) wire.Move {
	t.Helper()
	r := w.do(t, http.MethodGet, "/control/v1/moves/"+id, w.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	return decodeAs[wire.Move](t, r)
}

// await polls move id until cond holds.
func (w *moveWorld) await(t *testing.T, id string, cond func(wire.Move) bool) wire.Move {
	t.Helper()
	var m wire.Move
	require.Eventually(t, func() bool { m = w.get(t, id); return cond(m) }, 20*time.Second, 10*time.Millisecond)
	return m
}

func moveEnded(m wire.Move) bool {
	return m.State == wire.MoveCompleted || m.State == wire.MoveFailed || m.State == wire.MoveCancelled
}

// placedOn is the shard the gateways' placement lookup names for orders.
func (w *moveWorld) placedOn(t *testing.T) string {
	t.Helper()
	r := w.as(t, pkitest.Gateway).do(t, http.MethodGet, "/internal/v1/tenants/"+w.tid+"/namespaces/orders", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	return decodeAs[wire.NamespacePlacement](t, r).ShardID
}

func awaitStep(t *testing.T, fs *fakeMoveShard, step string) {
	t.Helper()
	select {
	case got := <-fs.reached:
		require.Equal(t, step, got)
	case <-time.After(20 * time.Second):
		t.Fatalf("step %s never reached", step)
	}
}

func keys(n int, tag string) map[string]string {
	out := map[string]string{}
	for i := range n {
		out[fmt.Sprintf("job/%05d", i)] = tag
	}
	return out
}

// A move copies the snapshot, catches up in delta rounds while the last
// copy held more than 1,000 records, fences the source, copies the last
// changes, ends on the target and switches placement (visible to the
// gateways' lookup at once, before the source's copy is removed), then
// finishes on the source; the record shows each state and the figures.
func TestMoveHappyPathStatesAndProgress(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.src.set(w.sns, keys(1500, "v0"))
	deltas := 0
	w.src.onDelta = func() {
		deltas++
		switch deltas {
		case 1: // changes made while the snapshot was copied
			w.src.set(w.sns, keys(1200, "v1"))
		case 2:
			w.src.set(w.sns, map[string]string{"job/00001": "v2", "job/00002": "", "job/00003": "", "new/1": "v2"})
		}
	}
	openFence := w.src.gate("fence")
	openEnd := w.dst.gate("end")
	openFinish := w.src.gate("finish")
	m := w.start(t)

	awaitStep(t, w.src, "fence")
	caught := w.get(t, m.ID)
	require.Equal(t, wire.MoveCatchingUp, caught.State)
	require.Equal(t, 2, caught.Rounds, "two delta rounds before the fence: the first held 1,200 records")
	require.Equal(t, int64(1500+1200+4), caught.Records)
	require.Positive(t, caught.Bytes)
	openFence()

	awaitStep(t, w.dst, "end")
	fenced := w.get(t, m.ID)
	require.Equal(t, wire.MoveFenced, fenced.State)
	require.Equal(t, 3, fenced.Rounds, "the fenced delta counts")
	require.Equal(t, caught.Records, fenced.Records, "the fenced delta held nothing new")
	require.Greater(t, fenced.Bytes, caught.Bytes, "an empty delta still sends its header")
	f, _, _, _ := w.src.state(w.sns)
	require.Equal(t, m.ID, f.token)
	require.Equal(t, int64(30000), f.ttlMS)
	require.Equal(t, "s2", w.placedOn(t), "placement stays until the switch")
	time.Sleep(150 * time.Millisecond) // the pause the record must show
	openEnd()

	awaitStep(t, w.src, "finish")
	sw := w.get(t, m.ID)
	require.Equal(t, wire.MoveSwitched, sw.State)
	require.Equal(t, "s1", w.placedOn(t), "the switched placement is what gateways read at once")
	require.Equal(t, 3, sw.Rounds)
	require.Equal(t, fenced.Records, sw.Records)
	require.Equal(t, fenced.Bytes, sw.Bytes)
	require.GreaterOrEqual(t, sw.PauseMS, int64(150))
	require.Less(t, sw.PauseMS, int64(10000))
	c := w.do(t, http.MethodPost, "/control/v1/moves/"+m.ID+"/cancel", w.op, nil)
	requireError(t, c, http.StatusConflict, "conflict")
	want := w.src.get(w.sns)
	openFinish()

	done := w.await(t, m.ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, done.State, "error: %s", done.Error)
	require.NotNil(t, done.FinishedAt)
	require.Equal(t, sw.PauseMS, done.PauseMS)
	require.Equal(t, want, w.dst.get(w.sns), "the target holds the source's keys as of the fence")
	require.Len(t, want, 1500-2+1)
	require.Empty(t, w.src.get(w.sns), "the source's copy is removed")
	_, _, moved, session := w.src.state(w.sns)
	require.Equal(t, "s1", moved)
	require.False(t, session)
	require.Equal(t, []string{"snapshot", "delta", "delta", "fence", "delta", "finish"}, w.src.steps())
	require.Equal(t, []string{"begin", "apply", "apply", "apply", "apply", "end"}, w.dst.steps())

	// The shard counts follow the namespace.
	shards, err := w.srv.Shards(context.Background())
	require.NoError(t, err)
	for _, sh := range shards {
		require.Equal(t, map[string]uint64{"s2": 0, "s1": 2}[sh.ID], sh.Namespaces, sh.ID)
	}
	// A move back is a new move, from s1.
	r := w.do(t, http.MethodPost, "/control/v1/namespaces/"+w.tid+"/orders/move", w.op, wire.NamespaceMoveRequest{ToShard: "s2"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	back := w.await(t, decodeAs[wire.Move](t, r).ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, back.State, "error: %s", back.Error)
	require.Equal(t, "s2", w.placedOn(t))
	require.Equal(t, want, w.src.get(w.sns))
}

// A step that fails before the switch fails the move: the source's fence
// is lifted, the target's copy aborted, and the namespace stays placed on
// the source with its data.
func TestMoveFailureAtEachStepCleansUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ shard, step string }{
		{"dst", "begin"}, {"src", "snapshot"}, {"dst", "apply"}, {"src", "delta"}, {"src", "fence"}, {"dst", "end"},
	} {
		t.Run(tc.shard+"_"+tc.step, func(t *testing.T) {
			t.Parallel()
			w := moveSetup(t)
			w.src.set(w.sns, keys(1100, "v0")) // over 1,000: one delta round before the fence
			fs := map[string]*fakeMoveShard{"src": w.src, "dst": w.dst}[tc.shard]
			fs.failStep(tc.step, http.StatusInternalServerError)
			m := w.await(t, w.start(t).ID, moveEnded)
			require.Equal(t, wire.MoveFailed, m.State)
			require.Contains(t, m.Error, tc.step)
			require.Contains(t, m.Error, "the shard refused "+tc.step)
			require.NotNil(t, m.FinishedAt)
			require.Equal(t, "s2", w.placedOn(t))
			require.Contains(t, w.src.steps(), "unfence")
			require.Contains(t, w.dst.steps(), "abort")
			require.NotContains(t, w.src.steps(), "finish")
			fence, _, moved, session := w.src.state(w.sns)
			require.Empty(t, fence.token, "no fence left")
			require.Empty(t, moved)
			require.False(t, session)
			_, mark, _, _ := w.dst.state(w.sns)
			require.Empty(t, mark, "the target's copy is aborted")
			require.Len(t, w.src.get(w.sns), 1100)
			require.Empty(t, w.dst.get(w.sns))
			// Over: the namespace may move again.
			again := w.do(t, http.MethodPost, "/control/v1/namespaces/"+w.tid+"/orders/move", w.op, wire.NamespaceMoveRequest{ToShard: "s1"})
			require.Equal(t, http.StatusAccepted, again.status, "body: %s", again.body)
		})
	}
}

// A cut-over that outlasts the fence's ttl less its margin fails rather
// than switch while the source may take writes again.
func TestMoveFailsWhenTheCutOverOutlastsTheFence(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.srv.leader.SetMoveFence(2*time.Second, 1500*time.Millisecond)
	w.src.set(w.sns, keys(10, "v0"))
	open := w.dst.gate("end")
	m := w.start(t)
	awaitStep(t, w.dst, "end")
	time.Sleep(time.Second)
	open()
	m = w.await(t, m.ID, moveEnded)
	require.Equal(t, wire.MoveFailed, m.State)
	require.Contains(t, m.Error, "fence's time")
	require.Equal(t, "s2", w.placedOn(t))
	require.Contains(t, w.src.steps(), "unfence")
	require.Contains(t, w.dst.steps(), "abort")
}

// A finish the source refuses is retried until it succeeds; the move
// stays switched meanwhile.
func TestMoveFinishIsRetried(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.src.set(w.sns, keys(10, "v0"))
	w.src.failStep("finish", http.StatusInternalServerError)
	m := w.start(t)
	require.Eventually(t, func() bool {
		n := 0
		for _, s := range w.src.steps() {
			if s == "finish" {
				n++
			}
		}
		return n >= 2
	}, 20*time.Second, 10*time.Millisecond)
	require.Equal(t, wire.MoveSwitched, w.get(t, m.ID).State)
	require.Equal(t, "s1", w.placedOn(t))
	w.src.failStep("finish", 0)
	m = w.await(t, m.ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, m.State)
	require.NotContains(t, w.src.steps(), "unfence")
	require.NotContains(t, w.dst.steps(), "abort")
}

// A cancel before the switch stops the move where it is, lifts the
// fence, aborts the target's copy and ends it cancelled; placement is
// unchanged. Cancelling it again changes nothing.
func TestMoveCancelBeforeSwitch(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.src.set(w.sns, keys(1100, "v0"))
	w.src.gate("delta")
	m := w.start(t)
	awaitStep(t, w.src, "delta")
	r := w.do(t, http.MethodPost, "/control/v1/moves/"+m.ID+"/cancel", w.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	c := decodeAs[wire.Move](t, r)
	require.Equal(t, wire.MoveCancelled, c.State)
	require.Empty(t, c.Error)
	require.NotNil(t, c.FinishedAt)
	require.Equal(t, "s2", w.placedOn(t))
	require.Contains(t, w.src.steps(), "unfence")
	require.Contains(t, w.dst.steps(), "abort")
	require.NotContains(t, w.src.steps(), "fence")
	_, mark, _, _ := w.dst.state(w.sns)
	require.Empty(t, mark)
	require.Len(t, w.src.get(w.sns), 1100)

	r = w.do(t, http.MethodPost, "/control/v1/moves/"+m.ID+"/cancel", w.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, wire.MoveCancelled, decodeAs[wire.Move](t, r).State)
}

// A cancel of a fenced move is cancelled too: the fence is lifted. Once
// the last delta is copied and the target is ending, a cancel is too
// late (409) and the move completes.
func TestMoveCancelWhileFenced(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.src.set(w.sns, keys(10, "v0"))
	w.src.gate("delta") // with 10 records, the only delta is the fenced one
	m := w.start(t)
	awaitStep(t, w.src, "delta")
	require.Equal(t, wire.MoveFenced, w.get(t, m.ID).State)
	r := w.do(t, http.MethodPost, "/control/v1/moves/"+m.ID+"/cancel", w.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, wire.MoveCancelled, decodeAs[wire.Move](t, r).State)
	fence, _, _, _ := w.src.state(w.sns)
	require.Empty(t, fence.token, "the fence is lifted")
	require.Equal(t, "s2", w.placedOn(t))
	require.NotContains(t, w.src.steps(), "finish")
	require.NotContains(t, w.dst.steps(), "end")

	w.src.openGates()
	open := w.dst.gate("end")
	m = w.start(t)
	awaitStep(t, w.dst, "end")
	requireError(t, w.do(t, http.MethodPost, "/control/v1/moves/"+m.ID+"/cancel", w.op, nil), http.StatusConflict, "conflict")
	open()
	m = w.await(t, m.ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, m.State, "error: %s", m.Error)
	require.Equal(t, "s1", w.placedOn(t))
}

// Hours metered on the shard a namespace moved away from stay in the
// ledger under that shard; until that shard's cursor passes the hour the
// move finished in, the namespace's buckets are incomplete even when
// the ledger has nothing from it yet.
func TestMoveUsageWaitsForTheFormerShard(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.src.set(w.sns, keys(3, "v0"))
	m := w.await(t, w.start(t).ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, m.State)
	now := time.Now().UTC()
	closed := ceilTo(now, time.Hour).Add(time.Hour)
	put(t, w.srv, "s1", closed, entry(w.tid, "orders", now.Truncate(time.Hour), runs(2)))
	q, err := service.ParseUsageQuery(now, "", "", "hour", "orders")
	require.NoError(t, err)
	current := func() wire.UsageBucketView {
		u, err := w.srv.Usage(context.Background(), w.tid, q)
		require.NoError(t, err)
		require.Len(t, u.Namespaces, 1)
		b := u.Namespaces[0].Buckets
		require.NotEmpty(t, b)
		return b[len(b)-1]
	}
	require.True(t, current().Incomplete, "s2, which the namespace left this hour, was never read")
	put(t, w.srv, "s2", m.FinishedAt.Truncate(time.Hour))
	require.True(t, current().Incomplete, "s2's cursor is still at the hour the move finished in")
	put(t, w.srv, "s2", closed)
	require.False(t, current().Incomplete)
	require.Equal(t, int64(2), current().Meters.Executions)
}

// A node that stops while a move copies lifts the fence, aborts the
// target and records the move failed; a move it leaves switched is
// finished by the node that leads after it (here the same one, restarted).
func TestMoveAcrossARestart(t *testing.T) {
	t.Parallel()
	w := moveSetup(t, func(c *Config) { c.BackupOrphanAfter = 200 * time.Millisecond })
	ctx := context.Background()
	w.src.set(w.sns, keys(10, "v0"))
	w.src.gate("snapshot")
	m := w.start(t)
	awaitStep(t, w.src, "snapshot")
	require.NoError(t, w.srv.Stop())
	require.Contains(t, w.src.steps(), "unfence")
	require.Contains(t, w.dst.steps(), "abort")
	w.src.openGates()

	second := startServer(t, w.cfg)
	got, err := second.Move(ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, wire.MoveFailed, got.State)
	require.Equal(t, leader.MoveStopped, got.Error)
	p, err := second.Namespace(ctx, w.tid, "orders")
	require.NoError(t, err)
	require.Equal(t, "s2", p.ShardID)

	w.src.gate("finish")
	sw, err := second.StartMove(ctx, w.tid, "orders", "s1")
	require.NoError(t, err)
	awaitStep(t, w.src, "finish")
	require.NoError(t, second.Stop())
	w.src.openGates()
	third := startServer(t, w.cfg)
	require.Eventually(t, func() bool {
		got, err := third.Move(ctx, sw.ID)
		return err == nil && got.State == wire.MoveCompleted
	}, 20*time.Second, 20*time.Millisecond)
	p, err = third.Namespace(ctx, w.tid, "orders")
	require.NoError(t, err)
	require.Equal(t, "s1", p.ShardID)
	require.Empty(t, w.src.get(w.sns))
	require.Len(t, w.dst.get(w.sns), 10)
}
