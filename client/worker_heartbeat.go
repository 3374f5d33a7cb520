package client

import (
	"context"
	"time"
)

// minHeartbeatTimeout bounds one heartbeat call from below, so that short
// intervals do not make heartbeats time out on a busy server.
const minHeartbeatTimeout = 5 * time.Second

// heartbeatLoop sends one batched heartbeat per interval for all running
// jobs, until ctx is done.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.heartbeat(ctx)
		}
	}
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
	for i, jc := range running {
		var p *Progress
		p, vers[i] = jc.pendingProgress()
		jobs[jc.ID] = HeartbeatJob{Progress: p}
	}
	ctx, cancel := context.WithTimeout(ctx, max(w.cfg.HeartbeatInterval, minHeartbeatTimeout))
	defer cancel()
	res, err := w.c.Heartbeat(ctx, jobs)
	if err != nil {
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
