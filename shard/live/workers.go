package live

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Workers are what the node has observed, not replicated state: each node
// keeps them in memory per namespace. A worker is seen when it calls fetch
// or heartbeat with a worker_id (the leader serves those calls), and its
// active jobs are the jobs whose lease to it this node applied and whose
// settling (ack, fail, lease expiry, cancel) it has not applied yet. A node
// that becomes leader knows the workers whose fetches it applied as a
// follower; their hostname and queues return with their next call. A
// restarted node starts with none.
const (
	WorkerGoneAfter = 2 * time.Minute  // unseen this long: listed as gone
	WorkerDropAfter = 30 * time.Minute // unseen this long: forgotten
	maxWorkersPerNS = 1000             // the least recently seen is forgotten first
	maxWorkerJobIDs = 100              // active job ids listed per worker
)

// Workers are the workers a node has seen, per namespace.
type Workers struct {
	mu    sync.Mutex
	clock clockwork.Clock
	ns    map[string]*nsWorkers
	// fetched is the last pull fetch per namespace and queue (Fetched).
	fetched map[string]time.Time
}

type nsWorkers struct {
	byID  map[string]*workerState
	byJob map[string]*workerState // active job id → the worker it is leased to
}

type workerState struct {
	id, hostname string
	queues       []string
	active       map[string]string // active job id → its queue
	lastSeen     time.Time
	draining     bool              // drain.go
	cancels      map[string]string // active job id → its lease token: cancelled, not told yet (cancels.go)
	news         chan struct{}     // closed when it has news for its waiting fetches; nil while none waits
}

// NewWorkers returns an empty set; clock says when a worker is seen.
func NewWorkers(clock clockwork.Clock) *Workers {
	return &Workers{clock: clock, ns: map[string]*nsWorkers{}}
}

// workerChange is a lease started (worker set) or settled, staged until
// its entry commits.
type workerChange struct {
	ns, worker, job, queue string
	at                     time.Time
}

// Observer returns the engine observer that keeps each worker's active
// jobs, applied once the entry commits.
func (ws *Workers) Observer() engine.Observer {
	st := &stage[workerChange]{publish: ws.apply}
	return func(tx *replica.Tx, ns string, j *job.Job, from job.State) {
		switch {
		case j.State == job.Active && from != job.Active && j.WorkerID != "":
			st.add(tx, workerChange{ns: ns, worker: j.WorkerID, job: j.ID, queue: j.Queue, at: tx.Now})
		case from == job.Active && j.State != job.Active:
			st.add(tx, workerChange{ns: ns, job: j.ID})
		}
	}
}

func (ws *Workers) apply(cs []workerChange) {
	for _, c := range cs {
		if c.worker != "" {
			ws.started(c.ns, c.worker, c.job, c.queue, c.at)
		} else {
			ws.settled(c.ns, c.job)
		}
	}
}

// Seen records a fetch or heartbeat of worker id. Ids and hostnames are
// labels the caller picks: overlong ones, and queue lists fetch would
// refuse, are not recorded. hostname "" and queues nil keep what is known.
func (ws *Workers) Seen(ns, id, hostname string, queues []string) {
	if id == "" || len(id) > wire.MaxWorkerID || len(hostname) > wire.MaxWorkerID || len(queues) > wire.MaxFetchQueues {
		return
	}
	for _, q := range queues {
		if tenancy.ValidateQueue(q) != nil {
			return
		}
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.getLocked(ns, id)
	if hostname != "" {
		w.hostname = hostname
	}
	if queues != nil {
		w.queues = slices.Clone(queues)
	}
	w.lastSeen = ws.clock.Now()
}

func (ws *Workers) started(ns, id, jobID, queue string, at time.Time) {
	if len(id) > wire.MaxWorkerID {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.getLocked(ns, id)
	w.active[jobID] = queue
	ws.ns[ns].byJob[jobID] = w
	if at.After(w.lastSeen) {
		w.lastSeen = at
	}
}

func (ws *Workers) settled(ns, jobID string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := ws.ns[ns]
	if n == nil {
		return
	}
	if w := n.byJob[jobID]; w != nil {
		delete(w.active, jobID)
		delete(w.cancels, jobID)
		delete(n.byJob, jobID)
	}
}

// getLocked returns worker id of ns, adding it (and forgetting the least
// recently seen worker when ns is full).
func (ws *Workers) getLocked(ns, id string) *workerState {
	n := ws.ns[ns]
	if n == nil {
		n = &nsWorkers{byID: map[string]*workerState{}, byJob: map[string]*workerState{}}
		ws.ns[ns] = n
	}
	if w := n.byID[id]; w != nil {
		return w
	}
	if len(n.byID) >= maxWorkersPerNS {
		var oldest *workerState
		for _, w := range n.byID {
			if oldest == nil || w.lastSeen.Before(oldest.lastSeen) {
				oldest = w
			}
		}
		n.forget(oldest)
	}
	w := &workerState{id: id, active: map[string]string{}}
	n.byID[id] = w
	return w
}

func (n *nsWorkers) forget(w *workerState) {
	for jid := range w.active {
		delete(n.byJob, jid)
	}
	delete(n.byID, w.id)
	w.wakeLocked() // a fetch waiting on it looks again, at a new record

}

// List returns the workers of ns by id, forgetting those unseen for
// WorkerDropAfter. Under a limited scope a worker shows only the queues it
// fetches from and the active jobs that are in the scope, and a worker
// with neither is not listed.
func (ws *Workers) List(ns string, sc tenancy.QueueScope) []wire.Worker {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := []wire.Worker{}
	n := ws.ns[ns]
	if n == nil {
		return out
	}
	now := ws.clock.Now()
	for _, w := range n.byID {
		idle := now.Sub(w.lastSeen)
		if idle >= WorkerDropAfter {
			n.forget(w)
			continue
		}
		v := wire.Worker{ID: w.id, Hostname: w.hostname, Queues: w.queues, ActiveJobs: len(w.active),
			ActiveJobIDs: make([]string, 0, min(len(w.active), maxWorkerJobIDs)), LastSeen: w.lastSeen.UTC(), Status: wire.WorkerActive,
			Draining: w.draining}
		if !sc.All() {
			v.Queues = slices.DeleteFunc(slices.Clone(w.queues), func(q string) bool { return !sc.Allows(q) })
			v.ActiveJobs = 0
		}
		if v.Queues == nil {
			v.Queues = []string{}
		}
		for jid, q := range w.active {
			if !sc.Allows(q) {
				continue
			}
			if !sc.All() {
				v.ActiveJobs++ // counted here: some are left out
			} else if len(v.ActiveJobIDs) == maxWorkerJobIDs {
				break
			}
			if len(v.ActiveJobIDs) < maxWorkerJobIDs {
				v.ActiveJobIDs = append(v.ActiveJobIDs, jid)
			}
		}
		if !sc.All() && len(v.Queues) == 0 && v.ActiveJobs == 0 {
			continue
		}
		sort.Strings(v.ActiveJobIDs)
		if idle >= WorkerGoneAfter {
			v.Status = wire.WorkerGone
		}
		out = append(out, v)
	}
	if len(n.byID) == 0 {
		delete(ws.ns, ns)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out
}

// Fetched records a pull fetch of the queues at the clock's now, whether
// or not it named a worker: a when_no_workers push queue pushes only
// while none came within wire.PushWorkerWindow (LastFetch).
func (ws *Workers) Fetched(ns string, queues []string) {
	now := ws.clock.Now()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.fetched == nil {
		ws.fetched = map[string]time.Time{}
	}
	for _, q := range queues {
		ws.fetched[ns+"\x00"+q] = now
	}
}

// LastFetch is when a pull fetch of the queue last came to this node
// (zero: none since it started).
func (ws *Workers) LastFetch(ns, queue string) time.Time {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.fetched[ns+"\x00"+queue]
}
