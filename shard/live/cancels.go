package live

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A worker's news: its jobs cancelled while it held them, and its drain.
// A fetch/batch naming the worker waits for news as well as for jobs
// (News), and its answer carries the cancels (TakeCancels), so a cancel
// reaches a waiting worker when it applies instead of at its next
// heartbeat. Like the rest of Workers this is the node's memory: every
// node records the cancels it applies, and the leader, which serves the
// fetches, tells them; a new leader tells those not settled yet again.
// Nothing is kept for a job once it settles.

// cancelChange is an active job marked cancelling, staged until its entry
// commits.
type cancelChange struct {
	ns, worker, job, queue, token string
}

// CancelObserver returns the engine's observer of active jobs marked
// cancelling, applied once the entry commits.
func (ws *Workers) CancelObserver() engine.CancelObserver {
	st := &stage[cancelChange]{publish: ws.cancelled}
	return func(tx *replica.Tx, ns string, j *job.Job) {
		if j.WorkerID == "" {
			return // leased to no worker id: nobody to tell but its heartbeats
		}
		st.add(tx, cancelChange{ns: ns, worker: j.WorkerID, job: j.ID, queue: j.Queue, token: job.LeaseOf(j).Token()})
	}
}

func (ws *Workers) cancelled(cs []cancelChange) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, c := range cs {
		if len(c.worker) > wire.MaxWorkerID {
			continue
		}
		var w *workerState
		if n := ws.ns[c.ns]; n != nil {
			w = n.byJob[c.job]
		}
		if w == nil { // leased before this node started: known from now on
			w = ws.getLocked(c.ns, c.worker)
			w.active[c.job] = c.queue
			ws.ns[c.ns].byJob[c.job] = w
		}
		if w.cancels == nil {
			w.cancels = map[string]string{}
		}
		w.cancels[c.job] = c.token
		w.wakeLocked()
	}
}

// wakeLocked ends the waits of the worker's fetches: it has news.
func (w *workerState) wakeLocked() {
	if w.news != nil {
		close(w.news)
		w.news = nil
	}
}

// News is what a fetch/batch of worker id of ns, under scope sc, waits on
// besides jobs: each call answers whether the worker has news now (a
// cancel in sc not told yet, or a drain), and otherwise the channel that
// closes when it may have. A worker the node does not record (no id, an
// overlong one) never has news.
func (ws *Workers) News(ns, id string, sc tenancy.QueueScope) func() (<-chan struct{}, bool) {
	return func() (<-chan struct{}, bool) {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		w := ws.lookupLocked(ns, id)
		if w == nil {
			return nil, false
		}
		if w.draining {
			return nil, true
		}
		for jid := range w.cancels {
			if sc.Allows(w.active[jid]) {
				return nil, true
			}
		}
		if w.news == nil {
			w.news = make(chan struct{})
		}
		return w.news, false
	}
}

// TakeCancels answers, once, worker id's cancelled jobs of the queues sc
// allows; nil when there are none.
func (ws *Workers) TakeCancels(ns, id string, sc tenancy.QueueScope) []wire.JobCancel {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.lookupLocked(ns, id)
	if w == nil || len(w.cancels) == 0 {
		return nil
	}
	var out []wire.JobCancel
	for jid, token := range w.cancels {
		if sc.Allows(w.active[jid]) {
			out = append(out, wire.JobCancel{JobID: jid, LeaseToken: token})
			delete(w.cancels, jid)
		}
	}
	return out
}

func (ws *Workers) lookupLocked(ns, id string) *workerState {
	if id == "" {
		return nil
	}
	if n := ws.ns[ns]; n != nil {
		return n.byID[id]
	}
	return nil
}
