package client

import (
	"context"
	"time"
)

// minHeartbeatTimeout bounds one heartbeat call from below, so that short
// intervals do not make heartbeats time out on a busy server.
const minHeartbeatTimeout = 5 * time.Second

// heartbeatLoop sends one batched heartbeat for all running jobs every
// heartbeatEvery, until ctx is done. A job whose lease is shorter than
// the interval allows (its queue's or its own lease_duration, when the
// worker asks for none) brings the next heartbeat forward: a lease that
// runs out uses up one of the job's attempts.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	next := time.Now().Add(w.heartbeatEvery())
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.leaseNudge:
			if due := time.Now().Add(w.heartbeatEvery()); due.Before(next) {
				next = due
				t.Reset(time.Until(next)) // only ever earlier, so nudges cannot starve it
			}
			continue
		case <-t.C:
		}
		w.heartbeat(ctx)
		next = time.Now().Add(w.heartbeatEvery())
		t.Reset(time.Until(next))
	}
}

// heartbeatEvery is the configured interval, or a third of the shortest
// lease of a running job if that is shorter.
func (w *Worker) heartbeatEvery() time.Duration {
	every := w.cfg.HeartbeatInterval
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, jc := range w.active {
		if third := jc.LeaseDuration / 3; third > 0 && third < every {
			every = third
		}
	}
	return every
}

// heartbeat extends the leases of the running jobs, delivers their
// progress, and stops the jobs the server cancelled or took back.
func (w *Worker) heartbeat(ctx context.Context) {
	w.mu.Lock()
	running := make([]*JobContext, 0, len(w.active))
	for _, jc := range w.active {
		running = append(running, jc)
	}
	w.mu.Unlock()
	if len(running) == 0 {
		return
	}
	jobs := make(map[string]HeartbeatJob, len(running))
	vers := make([]uint64, len(running))
	usage := make([]*AIUsage, len(running))
	for i, jc := range running {
		var p *Progress
		p, vers[i] = jc.pendingProgress()
		usage[i] = jc.takeUsage()
		jobs[jc.ID] = HeartbeatJob{Progress: p, LeaseToken: jc.LeaseToken, Usage: usage[i]}
	}
	ctx, cancel := context.WithTimeout(ctx, max(w.cfg.HeartbeatInterval, minHeartbeatTimeout))
	defer cancel()
	res, err := w.c.Heartbeat(ctx, jobs)
	if err != nil {
		for i, jc := range running {
			jc.restoreUsage(usage[i]) // the next heartbeat, or the ack, sends it
		}
		if ctx.Err() == nil {
			w.log.Warn("jobbie worker: heartbeat failed", "worker", w.cfg.WorkerID, "jobs", len(jobs), "err", err)
		}
		return
	}
	for i, jc := range running {
		jc.progressSent(vers[i])
		jc.apply(res)
	}
}
