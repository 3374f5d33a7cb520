package live

import (
	"slices"

	"github.com/jobbie/jobbie/tenancy"
)

// Drain marks worker id of ns draining (POST /api/v1/workers/{id}/drain):
// its fetches get no job from then on (a fetch/batch waiting for one
// answers at once, News) and its heartbeats say so, so it
// finishes what it holds and stops. Like the rest of Workers it lives in
// the leader's memory: a new leader or a restarted node does not know it,
// and a worker still running then is drained again. Under a limited
// scope only a worker all of whose queues the scope allows can be
// drained. ok is false for a worker the node has not seen (or the scope
// does not show): nothing changes.
func (ws *Workers) Drain(ns, id string, sc tenancy.QueueScope) (ok bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := ws.ns[ns]
	if n == nil {
		return false
	}
	w := n.byID[id]
	if w == nil || ws.clock.Now().Sub(w.lastSeen) >= WorkerDropAfter {
		return false
	}
	if !sc.All() && (len(w.queues) == 0 || slices.ContainsFunc(w.queues, func(q string) bool { return !sc.Allows(q) })) {
		return false
	}
	w.draining = true
	w.wakeLocked()
	return true
}

// Draining says whether worker id of ns was drained.
func (ws *Workers) Draining(ns, id string) bool {
	if id == "" {
		return false
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := ws.ns[ns]
	if n == nil {
		return false
	}
	w := n.byID[id]
	return w != nil && w.draining
}
