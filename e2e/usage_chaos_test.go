package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// Usage stays exact through a shard leader kill and a control restart
// (issue 15, "Exactness"): a fresh tenant's load on a 3-node shard, the
// leader SIGKILLed once and the control process SIGKILLed once (the dev
// supervisor starts it again), and afterwards GET /api/v1/usage equals,
// meter by meter, what the server acknowledged to the load generator.
//
// What the generator counts, and how it settles what it could not see:
//
//   - jobs_enqueued: the jobs of every enqueue answered 201 (one, or a
//     batch's job_ids). An enqueue answered anything else (a network
//     error after sending, a 5xx while the shard elects) may or may not
//     have stored its jobs: each job carries a tag cid with a
//     client-chosen id, and after the load each such job is looked up by
//     that tag (0 or 1 found, a batch all or none).
//   - jobs_completed: acks answered 200 ("completed"; per job in an ack
//     batch). A job that ends completed without such an answer must have
//     had an ack whose answer was lost; it counts once.
//   - jobs_dead: fails answered "dead" (the jobs that die have
//     max_retries 0). A job that ends dead without one either had a fail
//     whose answer was lost, or lost its lease in the kill: a lease that
//     runs out with no retries left kills the job (dead_reason
//     lease_expired). Either way it counts once; the log splits them.
//   - executions: the server counts an attempt when a fetch leases a job
//     (to active), and takes it back only when the lease is released
//     because the worker went away before it had the job (the job's
//     attempt number goes back down too). So executions = the leases the
//     workers received (each job and attempt number a fetch returned,
//     whether or not its ack then went through: a job whose ack was lost
//     is leased again once its lease runs out, and both leases count)
//     plus the leases that were committed but whose answer never reached
//     a worker (a fetch caught in the kill). Those are settled by looking
//     each job up: its attempt number is the attempts the server started
//     for it; the attempts of it no worker received are the lost leases,
//     and there can be no more of them than the leases the fetches with
//     no answer might have carried. (A lease released in a later hour
//     than it started is not taken back from its hour, which may be
//     closed: that needs a worker to hang up mid-poll, here only a call
//     outlasting chaosClient's 15 s, and a run crossing an hour; on a
//     mismatch the jobs' timelines are searched for releases.)
//   - jobs_failed (checked too): fails answered plus lost, plus lease
//     expiries: every failed attempt is in the job's errors.
//
// Then usage is polled until its totals have not changed for three pull
// intervals, within the metering lag, and must equal those counts.
func TestUsageExactUnderLeaderKillAndControlRestart(t *testing.T) {
	const (
		queue      = "usage.chaos"
		lease      = 3 * time.Second // a lease lost in the kill runs out soon
		batchMax   = 20              // jobs per fetch/batch
		pull       = 2 * time.Second // jobbie dev's --usage-pull-interval
		stableFor  = 3 * pull        // usage unchanged this long has settled
		phaseJobs  = 400             // jobs acknowledged between two steps of the chaos
		backlog    = 300             // producers wait while more jobs than this are unsettled
		everyNth   = 7               // every 7th job dies: max_retries 0, failed by its worker
		goodTries  = 20              // max_retries of the other jobs: a lost lease only retries them
		producers  = 2
		singleWkrs = 4 // workers that fetch and ack one job at a time
		batchWkrs  = 2 // workers that fetch and ack in batches
	)
	began := time.Now()
	c := launchCluster(t, 1, 3)
	if _, ok := c.leader("s1", 0, 30*time.Second); !ok {
		t.Fatal("no leader")
	}
	op := client.New(c.control, c.operatorKey, client.WithHTTPClient(c.ops))
	ct, err := op.CreateTenant(ctx(t), fmt.Sprintf("usage-chaos-%d", time.Now().UnixNano()%1e9))
	require.NoError(t, err)
	key, gw := ct.OwnerKey, c.gateway
	from := time.Now().UTC().Truncate(time.Hour)
	launched := time.Since(began)

	l := &ucLedger{sent: map[string]bool{}, seen: map[string]map[int]int{}, acked: map[string]int{},
		ackLost: map[string]bool{}, died: map[string]int{}, failLost: map[string]bool{}}
	var (
		stopProduce, stopWork atomic.Bool
		prodWG, workWG        sync.WaitGroup
	)

	// Producers: one enqueue, or a batch of 10 every third call, as fast as
	// the service takes them while the backlog stays under its bound (so
	// the workers are busy leasing and acking when the kills come, not idle
	// in a long-poll).
	for p := range producers {
		prodWG.Add(1)
		go func() {
			defer prodWG.Done()
			n := 0
			for call := 0; !stopProduce.Load(); call++ {
				for l.backlog() > backlog && !stopProduce.Load() {
					time.Sleep(5 * time.Millisecond)
				}
				size := 1
				if call%3 == 2 {
					size = 10
				}
				jobs := make([]map[string]any, size)
				cids := make([]string, size)
				for i := range jobs {
					n++
					cids[i] = fmt.Sprintf("p%d-%d", p, n)
					retries, doom := goodTries, "0"
					if n%everyNth == 0 {
						retries, doom = 0, "1"
					}
					jobs[i] = map[string]any{"queue": queue, "payload": map[string]any{"cid": cids[i]},
						"tags": map[string]string{"cid": cids[i], "doom": doom}, "max_retries": retries}
				}
				l.mu.Lock()
				for _, id := range cids {
					l.sent[id] = true
				}
				l.mu.Unlock()
				var status int
				var err error
				if size == 1 {
					var out wire.EnqueueResponse
					status, err = ucDo("POST", gw+"/api/v1/enqueue", key, jobs[0], &out)
				} else {
					var out wire.BatchResponse
					status, err = ucDo("POST", gw+"/api/v1/enqueue/batch", key, map[string]any{"jobs": jobs}, &out)
					if err == nil && status == 201 && len(out.JobIDs) != size {
						t.Errorf("a batch of %d answered 201 with %d job ids", size, len(out.JobIDs))
					}
				}
				l.mu.Lock()
				if err == nil && status == 201 {
					l.enqueued += size
					l.enqCalls[min(size-1, 1)]++
				} else {
					l.enqLost = append(l.enqLost, cids)
				}
				l.mu.Unlock()
			}
		}()
	}

	// Workers lease with a short lease, then complete each job or, if it is
	// to die, fail it.
	fail := func(w, id string) {
		var out wire.FailResponse
		status, err := ucDo("POST", gw+"/api/v1/fail/"+id, key, map[string]any{"error": "doomed", "worker_id": w}, &out)
		l.mu.Lock()
		defer l.mu.Unlock()
		if err == nil && status == 200 && out.Status == "dead" {
			l.dead++
			l.died[id]++
			return
		}
		if err == nil && status == 200 {
			l.anomalies = append(l.anomalies, fmt.Sprintf("fail of %s (max_retries 0) answered %q", id, out.Status))
		}
		l.failLost[id] = true
	}
	single := func(w string) {
		defer workWG.Done()
		for !stopWork.Load() {
			var j wire.FetchedJob
			status, err := ucDo("POST", gw+"/api/v1/fetch", key, map[string]any{"queues": []string{queue}, "worker_id": w,
				"timeout": 1, "lease_duration": lease.Seconds()}, &j)
			if err != nil || (status != 200 && status != 204) || (status == 200 && j.JobID == "") {
				l.mu.Lock()
				l.fetchLost++
				l.lostMax++
				l.mu.Unlock()
				continue
			}
			if status == 204 {
				continue
			}
			l.leased(j)
			if j.Tags["doom"] == "1" {
				fail(w, j.JobID)
				continue
			}
			var out wire.StatusResponse
			status, err = ucDo("POST", gw+"/api/v1/ack/"+j.JobID, key, map[string]any{"worker_id": w}, &out)
			l.mu.Lock()
			if err == nil && status == 200 && out.Status == "completed" {
				l.completed++
				l.acked[j.JobID]++
			} else {
				l.ackLost[j.JobID] = true
			}
			l.mu.Unlock()
		}
	}
	batch := func(w string) {
		defer workWG.Done()
		for !stopWork.Load() {
			var got wire.FetchBatchResponse
			status, err := ucDo("POST", gw+"/api/v1/fetch/batch", key, map[string]any{"queues": []string{queue}, "worker_id": w,
				"max": batchMax, "timeout": 1, "lease_duration": lease.Seconds()}, &got)
			if err != nil || status != 200 {
				l.mu.Lock()
				l.fetchLost++
				l.lostMax += batchMax
				l.mu.Unlock()
				continue
			}
			var acks []map[string]any
			for _, j := range got.Jobs {
				l.leased(j)
				if j.Tags["doom"] == "1" {
					fail(w, j.JobID)
				} else {
					acks = append(acks, map[string]any{"job_id": j.JobID})
				}
			}
			if len(acks) == 0 {
				continue
			}
			var out wire.AckBatchResponse
			status, err = ucDo("POST", gw+"/api/v1/ack/batch", key, map[string]any{"worker_id": w, "acks": acks}, &out)
			l.mu.Lock()
			answered := map[string]bool{}
			if err == nil && status == 200 {
				for _, r := range out.Results {
					if r.Error == nil && r.Status == "completed" {
						l.completed++
						l.acked[r.JobID]++
						answered[r.JobID] = true
					}
				}
			}
			for _, a := range acks {
				if id := a["job_id"].(string); !answered[id] {
					l.ackLost[id] = true
				}
			}
			l.mu.Unlock()
		}
	}
	for w := range singleWkrs {
		workWG.Add(1)
		go single(fmt.Sprint("s", w))
	}
	for w := range batchWkrs {
		workWG.Add(1)
		go batch(fmt.Sprint("b", w))
	}

	// Usage is read all along too: a decrease of a total is logged.
	watch := &ucWatch{}
	watchStop := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for {
			select {
			case <-watchStop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			if u, err := ucUsage(gw, key, from); err == nil {
				watch.see(u.Totals)
			}
		}
	}()
	defer func() {
		select {
		case <-watchStop:
		default:
			close(watchStop)
		}
		<-watchDone
	}()

	// The chaos, each step once the load has moved on since the last.
	moved := func(what string) {
		t.Helper()
		base := l.enqueuedNow()
		eventually(t, 60*time.Second, func() bool { return l.enqueuedNow() >= base+phaseJobs }, what)
	}
	moved("the load runs")
	leader, ok := c.leader("s1", 0, 20*time.Second)
	require.True(t, ok, "a leader before the kill")
	killed := time.Now()
	require.NoError(t, syscall.Kill(leader.PID, syscall.SIGKILL))
	next, ok := c.leader("s1", leader.PID, 30*time.Second)
	require.True(t, ok, "a new leader after killing %s", leader.NodeID)
	failover := time.Since(killed)
	t.Logf("killed shard leader %s (pid %d); %s leads after %s", leader.NodeID, leader.PID, next.NodeID, failover.Round(time.Millisecond))

	moved("the load runs again after the failover")
	ctl := ucControl(c)
	require.NotZero(t, ctl.PID, "control runs")
	killed = time.Now()
	require.NoError(t, syscall.Kill(ctl.PID, syscall.SIGKILL))
	eventually(t, 60*time.Second, func() bool {
		p := ucControl(c)
		return p.PID != 0 && p.PID != ctl.PID && ucReady(c)
	}, "the supervisor starts control again and it is ready")
	restart := time.Since(killed)
	t.Logf("killed control (pid %d); it is back (pid %d) and ready after %s", ctl.PID, ucControl(c).PID, restart.Round(time.Millisecond))

	moved("the load runs after control's restart")
	stopProduce.Store(true)
	prodWG.Wait()
	loadEnd := time.Now()

	// Settle: every job ends completed or dead (a lease lost in the kill
	// runs out and the job is leased again, or dies).
	eventually(t, 90*time.Second, func() bool {
		var page wire.SearchPage
		status, err := ucDo("POST", gw+"/api/v1/jobs/search", key, map[string]any{"queue": queue,
			"state": []string{"pending", "active", "retrying", "scheduled", "held"}, "limit": 1}, &page)
		return err == nil && status == 200 && page.Total == 0 && page.TotalExact && !page.Partial
	}, "every job settles")
	stopWork.Store(true)
	workWG.Wait()
	settled := time.Now()

	// Resolve what the generator could not see, from the jobs themselves.
	jobs := ucAllJobs(t, gw, key, queue)
	exp := l.expect(t, gw, key, jobs)
	t.Logf("usage chaos: jobs=%d (enqueues 201: %d single, %d batches; %d calls unanswered carrying %d jobs, %d of them stored) "+
		"leases received=%d lost=%d (fetches unanswered=%d, bound %d leases) acks 200=%d +%d lost answers; "+
		"fails dead=%d +%d lost answers +%d lease_expired; failed attempts=%d; failover=%s control restart=%s",
		exp.JobsEnqueued, l.enqCalls[0], l.enqCalls[1], len(l.enqLost), exp.lostJobs, exp.foundLost,
		exp.received, exp.lostLeases, l.fetchLost, l.lostMax, l.completed, exp.ackResolved,
		l.dead, exp.failResolved, exp.leaseDied, exp.JobsFailed, failover.Round(time.Millisecond), restart.Round(time.Millisecond))
	for _, a := range l.anomalies {
		t.Errorf("anomaly: %s", a)
	}

	// Poll usage until its totals hold still for stableFor, within the lag.
	var (
		last      wire.UsageMeters
		lastRead  bool
		changedAt = time.Now()
		firstOK   time.Time
	)
	deadline := time.Now().Add(usageLag + stableFor)
	for {
		u, err := ucUsage(gw, key, from)
		if err == nil {
			watch.see(u.Totals)
			if !lastRead || ucCore(u.Totals) != ucCore(last) {
				last, lastRead, changedAt = u.Totals, true, time.Now()
			}
			if ucCore(u.Totals) == exp.core() && firstOK.IsZero() {
				firstOK = time.Now()
			} else if ucCore(u.Totals) != exp.core() {
				firstOK = time.Time{}
			}
			if time.Since(changedAt) >= stableFor && time.Since(settled) >= stableFor {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage did not settle within %s: last %+v, error %v; history %s", usageLag+stableFor, last, err, watch.history())
		}
		time.Sleep(250 * time.Millisecond)
	}
	close(watchStop)
	<-watchDone
	lag := "never equal"
	if !firstOK.IsZero() {
		lag = firstOK.Sub(settled).Round(100 * time.Millisecond).String()
	}
	t.Logf("usage totals: jobs_enqueued=%d executions=%d jobs_completed=%d jobs_failed=%d jobs_dead=%d active_job_seconds=%.3f storage_byte_hours=%.1f api_requests=%d",
		last.JobsEnqueued, last.Executions, last.JobsCompleted, last.JobsFailed, last.JobsDead, last.ActiveJobSeconds, last.StorageByteHours, last.APIRequests)
	t.Logf("expected:     jobs_enqueued=%d executions=%d jobs_completed=%d jobs_failed=%d jobs_dead=%d; equal %s after the jobs settled (load %s, run %s, cluster start %s)",
		exp.JobsEnqueued, exp.Executions, exp.JobsCompleted, exp.JobsFailed, exp.JobsDead, lag,
		loadEnd.Sub(began.Add(launched)).Round(time.Millisecond), time.Since(began).Round(time.Millisecond), launched.Round(time.Millisecond))
	if d := watch.decreases(); len(d) > 0 {
		t.Logf("usage totals went down while read: %s", strings.Join(d, "; "))
	}
	if ucCore(last) != exp.core() {
		ucDiagnose(t, gw, key, jobs, l)
	}
	require.Equal(t, exp.JobsEnqueued, last.JobsEnqueued, "jobs_enqueued")
	require.Equal(t, exp.JobsCompleted, last.JobsCompleted, "jobs_completed")
	require.Equal(t, exp.JobsDead, last.JobsDead, "jobs_dead")
	require.Equal(t, exp.Executions, last.Executions, "executions")
	require.Equal(t, exp.JobsFailed, last.JobsFailed, "jobs_failed")
	require.Greater(t, exp.JobsEnqueued, int64(3*phaseJobs), "the load ran")
}

// ucLedger is what the load generator was told, and what it was not.
type ucLedger struct {
	mu        sync.Mutex
	sent      map[string]bool // every cid sent
	enqueued  int             // jobs of enqueues answered 201
	enqCalls  [2]int          // 201s: single enqueues, batches
	enqLost   [][]string      // the cids of each enqueue without a 201
	received  int             // leases handed to a worker
	seen      map[string]map[int]int
	fetchLost int // fetches without an answer
	lostMax   int // the leases those fetches may have carried
	completed int // acks answered completed
	acked     map[string]int
	ackLost   map[string]bool // jobs with an ack whose outcome is unknown
	dead      int             // fails answered dead
	died      map[string]int
	failLost  map[string]bool // jobs with a fail whose outcome is unknown
	anomalies []string
}

func (l *ucLedger) leased(j wire.FetchedJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.received++
	if l.seen[j.JobID] == nil {
		l.seen[j.JobID] = map[int]int{}
	}
	l.seen[j.JobID][j.Attempt]++
}

// backlog is the jobs enqueued that no answer yet settled.
func (l *ucLedger) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enqueued - l.completed - l.dead
}

func (l *ucLedger) enqueuedNow() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enqueued
}

// ucExpected is what usage must show, with how the unknowns resolved.
type ucExpected struct {
	wire.UsageMeters
	lostJobs, foundLost       int // jobs of unanswered enqueues; of them stored
	received, lostLeases      int
	ackResolved, failResolved int
	leaseDied                 int
}

func (e ucExpected) core() [5]int64 { return ucCore(e.UsageMeters) }

func ucCore(m wire.UsageMeters) [5]int64 {
	return [5]int64{m.JobsEnqueued, m.Executions, m.JobsCompleted, m.JobsFailed, m.JobsDead}
}

// expect settles the unknowns against the jobs the server holds and
// returns the meters usage must show. Inconsistencies between what the
// server answered and what it holds are test errors.
func (l *ucLedger) expect(t *testing.T, gw, key string, jobs []wire.SearchJob) ucExpected {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var e ucExpected
	byCID := map[string]wire.SearchJob{}
	for _, j := range jobs {
		cid := j.Tags["cid"]
		if !l.sent[cid] {
			t.Errorf("job %s has cid %q, which no enqueue sent", j.ID, cid)
		}
		if prev, dup := byCID[cid]; dup {
			t.Errorf("cid %s stored twice: %s and %s", cid, prev.ID, j.ID)
		}
		byCID[cid] = j
	}

	// Enqueues: the 201s, plus the unanswered ones found by their tag.
	found := 0
	lost := map[string]bool{}
	for _, cids := range l.enqLost {
		n := 0
		for _, cid := range cids {
			lost[cid] = true
			var page wire.SearchPage
			status, err := ucDo("POST", gw+"/api/v1/jobs/search", key, map[string]any{"tags": map[string]string{"cid": cid}, "limit": 10}, &page)
			require.NoError(t, err)
			require.Equal(t, 200, status)
			require.LessOrEqual(t, len(page.Jobs), 1, "cid %s", cid)
			n += len(page.Jobs)
		}
		if n != 0 && n != len(cids) {
			t.Errorf("an unanswered batch of %d stored %d of its jobs", len(cids), n)
		}
		e.lostJobs += len(cids)
		found += n
	}
	e.foundLost = found
	e.JobsEnqueued = int64(l.enqueued + found)
	if int64(len(jobs)) != e.JobsEnqueued {
		t.Errorf("the queue holds %d jobs; the generator counts %d (%d answered 201, %d found by tag)", len(jobs), e.JobsEnqueued, l.enqueued, found)
	}
	for cid := range l.sent {
		if _, ok := byCID[cid]; !ok && !lost[cid] {
			t.Errorf("job cid %s was answered 201 but is not stored", cid)
		}
	}

	completed, dead := int64(l.completed), int64(l.dead)
	for _, j := range jobs {
		// Terminal outcomes: one per job.
		switch j.State {
		case "completed":
			if l.died[j.ID] > 0 {
				t.Errorf("job %s completed but a fail said dead", j.ID)
			}
			switch {
			case l.acked[j.ID] > 1:
				t.Errorf("job %s: %d acks answered completed", j.ID, l.acked[j.ID])
			case l.acked[j.ID] == 0 && l.ackLost[j.ID]:
				e.ackResolved++
				completed++
			case l.acked[j.ID] == 0:
				t.Errorf("job %s completed without an ack of ours", j.ID)
			}
		case "dead":
			if l.acked[j.ID] > 0 {
				t.Errorf("job %s died but an ack said completed", j.ID)
			}
			switch {
			case l.died[j.ID] > 1:
				t.Errorf("job %s: %d fails answered dead", j.ID, l.died[j.ID])
			case l.died[j.ID] == 0 && j.DeadReason != nil && *j.DeadReason == "lease_expired":
				e.leaseDied++
				dead++
			case l.died[j.ID] == 0 && l.failLost[j.ID]:
				e.failResolved++
				dead++
			case l.died[j.ID] == 0:
				t.Errorf("job %s died (%v) without a fail of ours", j.ID, j.DeadReason)
			}
		default:
			t.Errorf("job %s is %s after the jobs settled", j.ID, j.State)
		}
		if (j.Tags["doom"] == "1") != (j.State == "dead") {
			t.Errorf("job %s (doom %s) ended %s", j.ID, j.Tags["doom"], j.State)
		}
		// Attempts: every lease a worker received is one the job's attempt
		// number counts; the rest were lost on the way.
		got := 0
		for a, n := range l.seen[j.ID] {
			if a < 1 || a > j.Attempt || n > 1 {
				t.Errorf("job %s: a worker received attempt %d (%d times); the job stands at attempt %d", j.ID, a, n, j.Attempt)
			}
			got += n
		}
		if got < j.Attempt {
			e.lostLeases += j.Attempt - got
		}
		e.Executions += int64(j.Attempt)
		e.JobsFailed += int64(len(j.Errors))
	}
	held := map[string]bool{}
	for _, j := range jobs {
		held[j.ID] = true
	}
	for id := range l.seen {
		if !held[id] {
			t.Errorf("a worker leased job %s, which is not in the queue", id)
		}
	}
	e.received = l.received
	if e.lostLeases > l.lostMax {
		t.Errorf("%d leases were never received, more than the %d that the %d unanswered fetches could carry", e.lostLeases, l.lostMax, l.fetchLost)
	}
	if int64(l.received+e.lostLeases) != e.Executions {
		t.Errorf("leases received %d + lost %d != the jobs' attempts %d", l.received, e.lostLeases, e.Executions)
	}
	e.JobsCompleted, e.JobsDead = completed, dead
	return e
}

// ucAllJobs lists every job of queue, oldest first.
func ucAllJobs(t *testing.T, gw, key, queue string) []wire.SearchJob {
	t.Helper()
	var out []wire.SearchJob
	cursor := ""
	for {
		body := map[string]any{"queue": queue, "limit": wire.MaxSearchLimit, "sort": "created_at", "order": "asc"}
		if cursor != "" {
			body["cursor"] = cursor
		}
		var page wire.SearchPage
		status, err := ucDo("POST", gw+"/api/v1/jobs/search", key, body, &page)
		require.NoError(t, err)
		require.Equal(t, 200, status)
		out = append(out, page.Jobs...)
		if page.Cursor == nil || (!page.HasMore && !page.Partial) {
			return out
		}
		cursor = *page.Cursor
	}
}

// ucDiagnose logs, when usage differs, the jobs whose timeline explains
// executions the job records do not: releases, expiries, attempts.
func ucDiagnose(t *testing.T, gw, key string, jobs []wire.SearchJob, l *ucLedger) {
	t.Helper()
	events := map[string]int{}
	var odd []string
	for _, j := range jobs {
		var d wire.JobDetail
		status, err := ucDo("GET", gw+"/api/v1/jobs/"+j.ID, key, nil, &d)
		if err != nil || status != 200 {
			continue
		}
		started := 0
		for _, ev := range d.Timeline {
			events[ev.Event]++
			if ev.Event == "started" {
				started++
			}
		}
		if started != d.Attempt || len(l.seen[j.ID]) != d.Attempt {
			odd = append(odd, fmt.Sprintf("%s: attempt %d, started %d, leases received %v, state %s, errors %d",
				j.ID, d.Attempt, started, l.seen[j.ID], d.State, len(d.Errors)))
		}
	}
	t.Logf("diagnosis: timeline events %v", events)
	slices.Sort(odd)
	for _, o := range odd {
		t.Logf("diagnosis: %s", o)
	}
}

// ucWatch remembers every distinct usage total read, in order.
type ucWatch struct {
	mu   sync.Mutex
	seen []ucSeen
}

type ucSeen struct {
	at time.Time
	m  [5]int64
}

func (w *ucWatch) see(m wire.UsageMeters) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := ucCore(m)
	if n := len(w.seen); n == 0 || w.seen[n-1].m != c {
		w.seen = append(w.seen, ucSeen{time.Now(), c})
	}
}

// decreases lists the reads where a total went down from the read before.
func (w *ucWatch) decreases() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := []string{"jobs_enqueued", "executions", "jobs_completed", "jobs_failed", "jobs_dead"}
	var out []string
	for i := 1; i < len(w.seen); i++ {
		for k, name := range names {
			if w.seen[i].m[k] < w.seen[i-1].m[k] {
				out = append(out, fmt.Sprintf("%s %d → %d at %s", name, w.seen[i-1].m[k], w.seen[i].m[k], w.seen[i].at.Format(time.StampMilli)))
			}
		}
	}
	return out
}

func (w *ucWatch) history() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, s := range w.seen {
		fmt.Fprintf(&b, "%s %v; ", s.at.Format(time.StampMilli), s.m)
	}
	return b.String()
}

// ucUsage reads the tenant's hourly usage from the hour from to the end
// of the current one.
func ucUsage(gw, key string, from time.Time) (wire.Usage, error) {
	q := url.Values{"from": {from.Format(time.RFC3339)}, "to": {time.Now().UTC().Truncate(time.Hour).Add(time.Hour).Format(time.RFC3339)},
		"granularity": {"hour"}}
	var u wire.Usage
	status, err := ucDo("GET", gw+"/api/v1/usage?"+q.Encode(), key, nil, &u)
	if err == nil && status != 200 {
		err = fmt.Errorf("usage answered %d", status)
	}
	return u, err
}

// ucControl is control's entry in cluster.json.
func ucControl(c *localCluster) clusterProc {
	for _, p := range c.procs() {
		if p.Role == "control" {
			return p
		}
	}
	return clusterProc{}
}

// ucReady reports whether control answers its readiness check.
func ucReady(c *localCluster) bool {
	req, err := newRequest("GET", c.control+"/readyz", "", nil)
	if err != nil {
		return false
	}
	res, err := c.quick.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}

// ucDo sends one call through chaosClient and decodes a 2xx answer into
// out: err is a call that got no answer (its outcome unknown).
func ucDo(method, u, key string, body, out any) (int, error) {
	req, err := newRequest(method, u, key, body)
	if err != nil {
		return 0, err
	}
	res, err := chaosClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		return 0, err
	}
	if res.StatusCode/100 == 2 && out != nil && res.StatusCode != http.StatusNoContent && buf.Len() > 0 {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			return res.StatusCode, fmt.Errorf("undecodable %d answer: %w", res.StatusCode, err)
		}
	}
	return res.StatusCode, nil
}
