package connectapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"connectrpc.com/connect"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// A stream's fetches: while the worker has credit, a fetch/batch
// long-poll for it (fetchLoop); while it has none, one with max 0
// (watchLoop), which leases nothing and answers as soon as one of the
// worker's jobs is cancelled or the worker is drained. So one fetch of
// the stream always waits on the shard's leader, whose answer carries the
// worker's cancels (and its drain) the moment they apply, with credit or
// without. Credit granted while a watch waits starts a fetch beside it.

// fetchLoop runs a fetch/batch long-poll for the credit outstanding,
// hands the jobs to the worker, and waits for more credit when there is
// none, until ctx ends or the stream drains. A refusal that retrying
// cannot fix (a bad key, a forbidden queue) is returned, and ends the
// stream with its code; a busy or leaderless shard is retried.
func (st *stream) fetchLoop(ctx context.Context) error {
	var r retrier
	for {
		n, ok := st.wantJobs(ctx)
		if !ok {
			return nil
		}
		a := st.fetch(n)
		st.mu.Lock()
		st.fetching = false
		st.mu.Unlock()
		st.nudge() // the watch's turn, if no credit is left
		if err := r.after(ctx, st, a); err != nil || r.stop {
			return err
		}
	}
}

// watchLoop runs a fetch/batch with max 0 whenever the stream has no
// credit and no fetch out, until ctx ends or the stream drains; refusals
// as fetchLoop.
func (st *stream) watchLoop(ctx context.Context) error {
	var r retrier
	for {
		if !st.wantWatch(ctx) {
			return nil
		}
		if err := r.after(ctx, st, st.fetch(0)); err != nil || r.stop {
			return err
		}
	}
}

// fetch is one POST /api/v1/fetch/batch for n jobs (0: news only).
func (st *stream) fetch(n int) Answer {
	wait := st.s.work.FetchWait.Seconds()
	return st.call(http.MethodPost, "/api/v1/fetch/batch", wire.FetchBatchRequest{Max: &n, FetchRequest: wire.FetchRequest{
		Queues: st.hello.GetQueues(), WorkerID: st.hello.GetWorkerId(), Hostname: st.hello.GetHostname(),
		Timeout: &wait, LeaseDuration: st.lease}})
}

// retrier serves a fetch's answer and paces the retries of one loop.
type retrier struct {
	delay time.Duration
	stop  bool // the loop is done: ctx ended
}

// after serves answer a: its jobs and cancels go to the worker, its
// drain ends the stream of a worker that holds nothing; a busy or
// leaderless shard is waited for (its Retry-After, else a doubling
// delay); any other refusal is returned.
func (r *retrier) after(ctx context.Context, st *stream, a Answer) error {
	if a.Status == http.StatusOK {
		r.delay = 0
		got, err := leasedJobs(a.Body, st.hello.GetJsonPayloads())
		if err != nil {
			return connect.NewError(connect.CodeInternal, err)
		}
		if len(got.jobs) > 0 {
			st.deliver(got.jobs)
		}
		if len(got.cancels) > 0 {
			_ = st.send(&jobbiev1.WorkResponse{Cancels: got.cancels})
		}
		st.failUnsendable(got.unsendable)
		if a.Drain && st.workerDrained() {
			return st.errDrained()
		}
		return nil
	}
	if !transient(a.Status) {
		return answerError(a)
	}
	r.delay = min(max(2*r.delay, 100*time.Millisecond), 5*time.Second)
	pause := r.delay
	if secs, err := strconv.Atoi(a.RetryAfter); err == nil && secs > 0 {
		pause = time.Duration(secs) * time.Second
	}
	select {
	case <-ctx.Done():
		r.stop = true
	case <-time.After(pause):
	}
	return nil
}

// transient reports a status a later fetch may not get.
func transient(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// wantJobs waits for credit, and says how many jobs to ask for; false
// once ctx ends or the stream drains.
func (st *stream) wantJobs(ctx context.Context) (int, bool) {
	for {
		st.mu.Lock()
		n, stop := st.credit, st.draining || st.ended
		if !stop && n > 0 {
			st.fetching = true
		}
		st.mu.Unlock()
		if stop {
			return 0, false
		}
		if n > 0 {
			return min(n, st.s.work.FetchMax), true
		}
		select {
		case <-st.wake:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// wantWatch waits until the stream has no credit and no fetch out; false
// once ctx ends or the stream drains.
func (st *stream) wantWatch(ctx context.Context) bool {
	for {
		st.mu.Lock()
		idle, stop := st.credit == 0 && !st.fetching, st.draining || st.ended
		st.mu.Unlock()
		if stop {
			return false
		}
		if idle {
			return true
		}
		select {
		case <-st.watch:
		case <-ctx.Done():
			return false
		}
	}
}

// deliver sends jobs to the worker, each using one credit. Jobs that
// cannot reach it (the stream ended, the send failed) are released at
// once: the worker never had them.
func (st *stream) deliver(jobs []*jobbiev1.LeasedJob) {
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		st.release(leasesOf(jobs))
		return
	}
	for _, j := range jobs {
		st.held[j.GetJobId()] = wire.ReleaseEntry{JobID: j.GetJobId(), Attempt: int(j.GetAttempt()), LeaseToken: j.GetLeaseToken()}
	}
	st.credit -= len(jobs)
	st.mu.Unlock()
	st.nudge() // no credit left: the watch's turn (fetchLoop's nudge came before these jobs were counted)
	if err := st.send(&jobbiev1.WorkResponse{Jobs: jobs}); err != nil {
		var back []wire.ReleaseEntry
		st.mu.Lock()
		for _, j := range jobs {
			if e, ok := st.held[j.GetJobId()]; ok { // not released already, by the stream's end
				delete(st.held, j.GetJobId())
				back = append(back, e)
			}
		}
		st.mu.Unlock()
		st.release(back)
	}
}

func leasesOf(jobs []*jobbiev1.LeasedJob) []wire.ReleaseEntry {
	out := make([]wire.ReleaseEntry, len(jobs))
	for i, j := range jobs {
		out[i] = wire.ReleaseEntry{JobID: j.GetJobId(), Attempt: int(j.GetAttempt()), LeaseToken: j.GetLeaseToken()}
	}
	return out
}

// failUnsendable fails each job no frame can carry, for good: every
// later attempt would fail the same way, and released it would come back
// to this stream at once. Dead with its reason, it is not lost: a
// worker that asks for JSON payloads, or fetches over HTTP, can run it
// once it is retried. A fail the route refuses leaves the job to its
// lease, which runs out (the worker never had it).
func (st *stream) failUnsendable(jobs []unsendable) {
	for _, u := range jobs {
		st.call(http.MethodPost, "/api/v1/fail/"+u.jobID, wire.FailRequest{
			Error: fmt.Sprintf("the worker stream cannot carry job %s as a google.protobuf.Value: %v; "+
				"a worker that asks for JSON payloads (Hello.json_payloads), or fetches over HTTP, can run it", u.jobID, u.err),
			WorkerID: st.hello.GetWorkerId(), LeaseToken: u.leaseToken, NonRetryable: true})
	}
}
