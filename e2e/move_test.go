package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/moveload"
	"github.com/jobbie/jobbie/wire"
)

// Live namespace moves against `jobbie dev --shards 2`: the operator moves
// a namespace from one shard cluster to the other while producers,
// workers, a schedule, batches and unique jobs keep going through the
// gateway. The short run is part of `make test`; JOBBIE_CHAOS_LONG=1
// (`make chaos`) moves it back and forth with three replicas per shard.

// moveEnv is a tenant's namespace on a two-shard cluster.
type moveEnv struct {
	c         *localCluster
	tid, key  string
	ns        string
	from, to  string // the shard holding ns at first, and the other
	tap       *moveload.Tap
	tenantCli *client.Client // the owner key, on ns, through the tap
}

// newMoveEnv makes a tenant and its namespace ns, and says where control
// placed it.
func newMoveEnv(t *testing.T, c *localCluster, ns string) *moveEnv {
	op := client.New(c.control, c.operatorKey, client.WithHTTPClient(c.ops))
	ct, err := op.CreateTenant(ctx(t), fmt.Sprintf("move-%d", time.Now().UnixNano()%1e9))
	require.NoError(t, err)
	e := &moveEnv{c: c, tid: ct.Tenant.ID, key: ct.OwnerKey, ns: ns,
		tap: &moveload.Tap{Base: &http.Transport{MaxIdleConnsPerHost: 64}}}
	_, err = client.New(c.gateway, e.key).CreateNamespace(ctx(t), ns)
	require.NoError(t, err)
	e.tenantCli = e.client("")
	e.from = e.placement(t)
	for _, p := range c.procs() {
		if p.Role == "shard" && p.ShardID != e.from {
			e.to = p.ShardID
		}
	}
	require.NotEmpty(t, e.to, "a second shard cluster")
	return e
}

// client is a client of the tenant's namespace through the tap.
func (e *moveEnv) client(workerID string) *client.Client {
	opts := []client.Option{client.WithNamespace(e.ns), client.WithHTTPClient(&http.Client{Transport: e.tap})}
	if workerID != "" {
		opts = append(opts, client.WithWorkerID(workerID))
	}
	return client.New(e.c.gateway, e.key, opts...)
}

// placement is the shard control places the namespace on.
func (e *moveEnv) placement(t *testing.T) string {
	r := callVia(t, e.c.ops, "GET", e.c.control+"/control/v1/tenants/"+e.tid+"/namespaces", e.c.operatorKey, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var list struct {
		Namespaces []wire.NamespacePlacement `json:"namespaces"`
	}
	require.NoError(t, json.Unmarshal(r.Raw, &list))
	for _, n := range list.Namespaces {
		if n.Name == e.ns {
			return n.ShardID
		}
	}
	t.Fatalf("namespace %s not listed: %s", e.ns, r.Raw)
	return ""
}

// opCall is a call to control as the operator.
func (e *moveEnv) opCall(t *testing.T, method, path string, body any) reply {
	return callVia(t, e.c.ops, method, e.c.control+path, e.c.operatorKey, body)
}

// startMove asks control to move the namespace to shard to.
func (e *moveEnv) startMove(t *testing.T, to string) wire.Move {
	r := e.opCall(t, "POST", "/control/v1/namespaces/"+e.tid+"/"+e.ns+"/move", wire.NamespaceMoveRequest{ToShard: to})
	require.Equal(t, http.StatusAccepted, r.Status, string(r.Raw))
	var m wire.Move
	require.NoError(t, json.Unmarshal(r.Raw, &m))
	require.NotEmpty(t, m.ID)
	return m
}

func (e *moveEnv) getMove(t *testing.T, id string) wire.Move {
	r := e.opCall(t, "GET", "/control/v1/moves/"+id, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var m wire.Move
	require.NoError(t, json.Unmarshal(r.Raw, &m))
	return m
}

// waitMove polls the move until it ends, and returns it with the states it
// was seen in.
func (e *moveEnv) waitMove(t *testing.T, id string, within time.Duration) (wire.Move, []string) {
	var seen []string
	deadline := time.Now().Add(within)
	for {
		m := e.getMove(t, id)
		if len(seen) == 0 || seen[len(seen)-1] != m.State {
			seen = append(seen, m.State)
		}
		switch m.State {
		case wire.MoveCompleted, wire.MoveCancelled, wire.MoveFailed:
			return m, seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("move %s still %s after %v (states seen %v)", id, m.State, within, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMoveNamespaceUnderLoad(t *testing.T) {
	moves, replicas := 1, 1
	if haLong() {
		moves, replicas = 4, 3
	}
	c := launchCluster(t, 2, replicas)
	e := newMoveEnv(t, c, "moving")
	moveUnderLoad(t, e, moves)
}

// moveUnderLoad runs the load, moves the namespace moves times (back and
// forth) and checks the books.
func moveUnderLoad(t *testing.T, e *moveEnv, moves int) {
	const settle = 3 * time.Second // load before the first move and after each
	cl := e.tenantCli

	// Unique jobs nobody takes: their locks must hold across the move.
	uniques := map[string]string{}
	for i := range 20 {
		k := fmt.Sprintf("u-%d", i)
		r, err := cl.Enqueue(ctx(t), client.EnqueueRequest{Queue: moveload.HoldQueue, Payload: i, UniqueKey: k, UniquePeriod: time.Hour})
		require.NoError(t, err)
		uniques[k] = r.JobID
	}
	scheduled := time.Now()
	sch, err := cl.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "every-second", Queue: moveload.ScheduleQueue,
		Cron: "@every 1s", Timezone: "UTC", Payload: map[string]string{"from": "schedule"}})
	require.NoError(t, err)

	watch := moveload.Watch(e.client(""))
	load := moveload.Start(moveload.Config{Producers: 4, Workers: 4, Lease: 20 * time.Second, FetchWait: 2 * time.Second,
		BatchEvery: 10, BatchSize: 5, Backlog: 3000}, e.client)
	time.Sleep(settle)

	type done struct {
		m      wire.Move
		states []string
		from   time.Time
		to     time.Time
	}
	var ran []done
	for i := range moves {
		to := e.to
		if i%2 == 1 {
			to = e.from
		}
		start := time.Now()
		m := e.startMove(t, to)
		fin, states := e.waitMove(t, m.ID, 3*time.Minute)
		require.Equal(t, wire.MoveCompleted, fin.State, "move %d: %s (states %v)", i, fin.Error, states)
		require.Equal(t, to, e.placement(t), "control places the namespace on the target")
		ran = append(ran, done{fin, states, start, time.Now()})
		time.Sleep(settle)
	}

	load.StopProducers()
	stopped := time.Now()
	watch.Stop()
	_, err = cl.DisableSchedule(ctx(t), sch.ID)
	require.NoError(t, err)
	unscheduled := time.Now()
	drained := load.Drain(60 * time.Second)

	// The unique locks held: the same keys name the same jobs.
	for k, id := range uniques {
		r, err := cl.Enqueue(ctx(t), client.EnqueueRequest{Queue: moveload.HoldQueue, Payload: k, UniqueKey: k, UniquePeriod: time.Hour})
		require.NoError(t, err)
		require.True(t, r.UniqueExisting, "unique key %s lost its lock in the move", k)
		require.Equal(t, id, r.JobID)
	}

	// Every job at the server: completed, once.
	states := map[string]int{}
	stored := map[string]bool{}
	for _, q := range []string{moveload.WorkQueue, moveload.CallbackQueue, moveload.ScheduleQueue} {
		for j, err := range cl.SearchAll(ctx(t), client.SearchRequest{SearchFilter: wire.SearchFilter{Queue: q}}) {
			require.NoError(t, err)
			states[j.Queue+" "+j.State]++
			if j.Queue == moveload.WorkQueue {
				stored[j.ID] = true
			}
		}
	}
	for _, q := range []string{moveload.WorkQueue, moveload.CallbackQueue, moveload.ScheduleQueue} {
		for st, n := range states {
			if strings.HasPrefix(st, q+" ") && st != q+" "+wire.StateCompleted {
				t.Errorf("%d jobs %s after the drain", n, st)
			}
		}
	}
	unanswered := 0
	for id := range stored {
		if !load.Enqueued(id) {
			unanswered++ // an enqueue answered otherwise that did store its job
		}
	}
	// Acknowledged, and acked by a worker, but not at the namespace's
	// shard now: lost with the source's copy.
	var gone []string
	for _, id := range load.EnqueuedIDs() {
		if !stored[id] {
			gone = append(gone, id)
		}
	}

	// The schedule fired once per second it was on, moves included.
	runs := scheduleRuns(t, cl, sch.ID)
	missed, twice := checkRuns(runs)
	require.NotEmpty(t, runs)
	// Its cron: every whole second after it was created until disabled
	// (give or take the one racing either call).
	expected := int(unscheduled.Truncate(time.Second).Sub(scheduled.Truncate(time.Second)) / time.Second)

	rep := load.Report(ran[0].from, ran[len(ran)-1].to)
	_, _, bare := e.tap.Counts()
	windows := make([]moveload.Report, len(ran))
	for i, d := range ran {
		w := load.Report(d.from, d.to)
		windows[i] = w
		t.Logf("move %d %s→%s: %v in %v, states %v, rounds %d, records %d, bytes %d, pause_ms %d; enqueues meanwhile %d "+
			"(%d sent again): p50 %v p99 %v max %v, longest gap %v", i, d.m.FromShard, d.m.ToShard,
			d.m.State, d.to.Sub(d.from).Round(time.Millisecond), d.states, d.m.Rounds, d.m.Records, d.m.Bytes, d.m.PauseMS,
			w.WindowEnqueues, w.Slow, w.P50, w.P99, w.MaxLatency, w.MaxGap)
	}
	t.Logf("load: %s", rep)
	t.Logf("jobs at the server by queue and state: %v", states)
	for _, id := range rep.Lost[:min(5, len(rep.Lost))] {
		if d, err := cl.GetJob(ctx(t), id); err == nil {
			t.Logf("lost %s: %s attempt %d created %v started %v", id, d.State, d.Attempt, d.CreatedAt, d.StartedAt)
		} else {
			t.Logf("lost %s: %v", id, err)
		}
	}
	t.Logf("acknowledged jobs missing at the server: %d", len(gone))
	t.Logf("stored jobs not acknowledged to a producer: %d; schedule: %d runs (its cron: %d) from %s to %s, missed %v, twice %v",
		unanswered, len(runs), expected, runs[0].Format(time.TimeOnly), runs[len(runs)-1].Format(time.TimeOnly), missed, twice)
	ws := watch.Report(ran[len(ran)-1].to)
	t.Logf("event stream: opened %d times, ended %d times, %d events (%d after the last move), open errors %v",
		ws.Opened, ws.Ended, ws.Events, ws.EventsAfter, ws.OpenErrs)
	t.Logf("client-visible %s", e.tap)
	t.Logf("producers stopped %v after the last move", stopped.Sub(ran[len(ran)-1].to).Round(time.Millisecond))

	require.NoError(t, drained)
	require.Empty(t, rep.Lost, "acknowledged jobs never completed")
	require.Empty(t, gone, "acknowledged jobs missing at the namespace's shard")
	require.Empty(t, rep.DoublesUnexcused, "jobs completed twice without a lease running out")
	require.Empty(t, rep.BatchesMissed, "batches whose callback never came")
	require.Empty(t, rep.BatchesTwice, "batches whose callback came twice")
	require.Empty(t, bare, "5xx answers without Retry-After")
	require.Empty(t, missed, "schedule runs missed")
	require.Empty(t, twice, "schedule runs fired twice")
	require.InDelta(t, expected, len(runs), 1, "runs against the schedule's cron")
	// An event stream ends when its namespace moves away, and opened again
	// it follows the namespace where it is now.
	require.GreaterOrEqual(t, ws.Ended, len(ran), "the event stream ended with each move")
	require.Positive(t, ws.EventsAfter, "events after the last move")
	for i, d := range ran {
		require.Positive(t, d.m.PauseMS, "move %d: pause_ms reported", i)
		require.Positive(t, d.m.Records, "move %d: records copied reported", i)
		w := windows[i]
		require.Positive(t, w.WindowEnqueues, "move %d: producers enqueued meanwhile", i)
		require.Less(t, w.P99, 2*time.Second, "move %d: write pause p99", i)
		require.Less(t, w.MaxGap, 2*time.Second, "move %d: the longest a producer went without an enqueue", i)
	}
}

// scheduleRuns are the run times of schedule id's jobs, in order.
func scheduleRuns(t *testing.T, cl *client.Client, id string) []time.Time {
	var runs []time.Time
	for j, err := range cl.SearchAll(ctx(t), client.SearchRequest{SearchFilter: wire.SearchFilter{Queue: moveload.ScheduleQueue,
		Tags: map[string]string{"jobbie.schedule_id": id}}}) {
		require.NoError(t, err)
		at, err := time.Parse(time.RFC3339Nano, j.Tags["jobbie.run_at"])
		require.NoError(t, err, "run_at of %s", j.ID)
		runs = append(runs, at)
	}
	slices.SortFunc(runs, func(a, b time.Time) int { return a.Compare(b) })
	return runs
}

// checkRuns compares an every-second schedule's runs with its cron: one a
// second from the first to the last.
func checkRuns(runs []time.Time) (missed, twice []string) {
	for i := 1; i < len(runs); i++ {
		switch gap := runs[i].Sub(runs[i-1]); {
		case gap == 0:
			twice = append(twice, runs[i].Format(time.TimeOnly))
		case gap > time.Second:
			for m := runs[i-1].Add(time.Second); m.Before(runs[i]); m = m.Add(time.Second) {
				missed = append(missed, m.Format(time.TimeOnly))
			}
		}
	}
	return missed, twice
}

// TestMoveCancel cancels the move of a namespace while its snapshot is copied:
// the move ends cancelled, the namespace stays where it was and serves,
// and nothing is left on the target (a move there afterwards succeeds and
// brings every job).
func TestMoveCancel(t *testing.T) {
	const (
		batches  = 60
		perBatch = 1000
		queue    = "big"
	)
	c := launchCluster(t, 2, 1)
	e := newMoveEnv(t, c, "big")
	cl := e.tenantCli
	// Payloads that do not compress, so the snapshot takes a while to copy.
	pad := make([]byte, 600)
	for b := range batches {
		jobs := make([]client.EnqueueRequest, perBatch)
		for i := range jobs {
			_, _ = rand.Read(pad)
			jobs[i] = client.EnqueueRequest{Queue: queue, Payload: map[string]any{"b": b, "i": i, "pad": hex.EncodeToString(pad)}}
		}
		_, err := cl.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: jobs})
		require.NoError(t, err)
	}
	pending := func() int64 {
		q, err := cl.GetQueue(ctx(t), queue)
		require.NoError(t, err)
		return q.Counts.Pending
	}
	require.EqualValues(t, batches*perBatch, pending())

	m := e.startMove(t, e.to)
	// One move per namespace at a time.
	r := e.opCall(t, "POST", "/control/v1/namespaces/"+e.tid+"/"+e.ns+"/move", wire.NamespaceMoveRequest{ToShard: e.to})
	require.Equal(t, http.StatusConflict, r.Status, string(r.Raw))
	// Cancel once the copy is well under way.
	var before wire.Move
	for before = e.getMove(t, m.ID); before.State == wire.MoveCopying && time.Since(m.CreatedAt) < 300*time.Millisecond; before = e.getMove(t, m.ID) {
		time.Sleep(5 * time.Millisecond)
	}
	cancelAt := time.Since(m.CreatedAt)
	r = e.opCall(t, "POST", "/control/v1/moves/"+m.ID+"/cancel", nil)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, r.Status, string(r.Raw))
	fin, states := e.waitMove(t, m.ID, time.Minute)
	t.Logf("cancelled %v after it began, in state %s, %d records sent (%d bytes; %d when it ended); states seen %v",
		cancelAt.Round(time.Millisecond), before.State, before.Records, before.Bytes, fin.Records, states)
	require.Contains(t, []string{wire.MoveCopying, wire.MoveCatchingUp}, before.State, "cancelled while copying")
	require.Equal(t, wire.MoveCancelled, fin.State, "error: %s", fin.Error)

	// Still on the source, every job there, and serving.
	require.Equal(t, e.from, e.placement(t))
	require.EqualValues(t, batches*perBatch, pending())
	j, err := cl.Enqueue(ctx(t), client.EnqueueRequest{Queue: "after", Payload: 1})
	require.NoError(t, err)
	w := e.client("after-cancel")
	got, err := w.Fetch(ctx(t), client.FetchRequest{Queues: []string{"after"}, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Equal(t, j.JobID, got.ID)
	require.NoError(t, w.Ack(ctx(t), got.ID, nil))

	// The target kept nothing: moving there now starts clean and brings
	// every job.
	again := e.startMove(t, e.to)
	fin, states = e.waitMove(t, again.ID, 3*time.Minute)
	require.Equal(t, wire.MoveCompleted, fin.State, "error: %s (states %v)", fin.Error, states)
	t.Logf("then moved in %v: %d records, %d bytes, rounds %d, pause_ms %d", fin.FinishedAt.Sub(fin.CreatedAt).Round(time.Millisecond),
		fin.Records, fin.Bytes, fin.Rounds, fin.PauseMS)
	require.Equal(t, e.to, e.placement(t))
	require.EqualValues(t, batches*perBatch, pending())
	r = e.opCall(t, "POST", "/control/v1/moves/"+again.ID+"/cancel", nil)
	require.Equal(t, http.StatusConflict, r.Status, "a completed move cannot be cancelled: %s", r.Raw)
	d, err := cl.GetJob(ctx(t), j.JobID)
	require.NoError(t, err)
	require.Equal(t, wire.StateCompleted, d.State)
	require.Empty(t, e.tap.String()[len("5xx 0 (without Retry-After 0):"):], "no 5xx: %s", e.tap)
}

// TestMoveRefusesNamespaceDelete deletes a namespace through the gateway
// while it moves: refused (409), and nothing of it is gone.
func TestMoveRefusesNamespaceDelete(t *testing.T) {
	const jobs = 5000
	c := launchCluster(t, 2, 1)
	e := newMoveEnv(t, c, "kept")
	cl := e.tenantCli
	for b := range jobs / 1000 {
		batch := make([]client.EnqueueRequest, 1000)
		for i := range batch {
			batch[i] = client.EnqueueRequest{Queue: "kept", Payload: map[string]int{"b": b, "i": i}}
		}
		_, err := cl.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: batch})
		require.NoError(t, err)
	}
	m := e.startMove(t, e.to)
	del := callVia(t, http.DefaultClient, "DELETE", c.gateway+"/api/v1/namespaces/"+e.ns+"?force=true", e.key, nil)
	require.Equal(t, http.StatusConflict, del.Status, string(del.Raw))
	fin, states := e.waitMove(t, m.ID, time.Minute)
	require.Equal(t, wire.MoveCompleted, fin.State, "error: %s (states %v)", fin.Error, states)
	q, err := cl.GetQueue(ctx(t), "kept")
	require.NoError(t, err, "the refused delete emptied the namespace")
	require.EqualValues(t, jobs, q.Counts.Pending)
}
