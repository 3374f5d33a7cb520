package service

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Queue scopes. A request may be limited to some queues of its namespace
// (wire.QueueScopeHeader, parsed by the API into a tenancy.QueueScope).
// The zero scope is every queue, and then nothing here reads or parses
// anything: built-in roles pay no more than the header lookup. A limited
// scope is enforced by one helper per kind of reference:
//
//   - a queue the request names (an enqueue's queue, its chain's steps and
//     its batch's callback, a fetch's queues, a schedule's queue, a move's
//     target, a queue route, a filter's queue): AllowQueue and
//     AllowQueues, 403 forbidden naming the field, before anything is
//     proposed;
//   - a job, schedule, batch or bulk operation named by id: the same 404
//     as one that does not exist when its queue is outside (scopedJob and
//     inScope here, readSchedule and scopedScheduleID in schedules.go,
//     batchInScope, opVisible), so the caller learns nothing of it;
//   - lists and searches show only what is in scope, and count only that
//     (queueNames, ListDead, search.Filter.Scope through scopeFilter,
//     opVisible; live.Workers.List and the API's event stream).
//
// The checks read the node's applied state before the command is
// proposed. An active job cannot change queues, so what a worker does to
// its lease (ack, fail, heartbeat, release) is checked exactly; a job
// that is not active changes queues only by a move, so only a move
// applied between the check and the command, by a caller whose scope
// holds both queues, can make the command act on a job just moved out.

// AllowQueue refuses a queue the request names outside its scope: 403
// forbidden naming field.
func AllowQueue(sc tenancy.QueueScope, field, queue string) error {
	if sc.Allows(queue) {
		return nil
	}
	return apierr.OfField(apierr.Forbidden, field, "queue %q is not among the queues this key may act on here", queue)
}

// AllowQueues is AllowQueue for a list of queues, naming field[i].
func AllowQueues(sc tenancy.QueueScope, field string, queues []string) error {
	if sc.All() {
		return nil
	}
	for i, q := range queues {
		if err := AllowQueue(sc, fmt.Sprintf("%s[%d]", field, i), q); err != nil {
			return err
		}
	}
	return nil
}

// WholeNamespace refuses a limited scope an operation on the namespace as
// a whole (its usage, its deletion): that needs every queue.
func WholeNamespace(sc tenancy.QueueScope) error {
	if sc.All() {
		return nil
	}
	return apierr.OfField(apierr.Forbidden, wire.QueueScopeHeader, "this key may act on some queues of the namespace only, not on the namespace as a whole")
}

// jobNotFound is the 404 of a well-formed id that names no job, as the
// engine answers it.
func jobNotFound(id string) error { return apierr.New(apierr.NotFound, "job %s not found", id) }

// scopedJob answers the 404 of a missing job when sc is limited and job
// id is not in it. Every queue reads nothing.
func (s *Service) scopedJob(ns, id string, sc tenancy.QueueScope) error {
	if sc.All() || s.inScope(ns, id, sc) {
		return nil
	}
	return jobNotFound(id)
}

// inScope reports whether job id exists and its queue is in sc (a
// limited scope: the job is read).
func (s *Service) inScope(ns, id string, sc tenancy.QueueScope) bool {
	if sc.All() {
		return true
	}
	j, err := engine.ReadJob(s.node.DB(), ns, id)
	return err == nil && sc.Allows(j.Queue)
}

// dependenciesInScope refuses a depends_on naming a job outside the scope
// as the engine refuses one naming no job.
func (s *Service) dependenciesInScope(ns string, deps []string, sc tenancy.QueueScope) error {
	for _, id := range deps {
		if !s.inScope(ns, id, sc) {
			return apierr.Field("depends_on", "depends_on: job %s not found", id)
		}
	}
	return nil
}

// enqueueInScope checks what an enqueue names: its queue, its chain's
// steps and handlers, and the jobs it depends on. field prefixes the
// fields named ("jobs[2]." in a batch).
func (s *Service) enqueueInScope(ns, field string, r *wire.EnqueueRequest, sc tenancy.QueueScope) error {
	if sc.All() {
		return nil
	}
	if err := AllowQueue(sc, field+"queue", r.Queue); err != nil {
		return err
	}
	if c := r.Chain; c != nil {
		for i := range c.Steps {
			if err := AllowQueue(sc, fmt.Sprintf("%schain.steps[%d].queue", field, i), c.Steps[i].Queue); err != nil {
				return err
			}
		}
		for _, h := range []struct {
			name string
			step *wire.StepSpec
		}{{"on_failure", c.OnFailure}, {"on_exit", c.OnExit}} {
			if h.step != nil {
				if err := AllowQueue(sc, field+"chain."+h.name+".queue", h.step.Queue); err != nil {
					return err
				}
			}
		}
	}
	return s.dependenciesInScope(ns, r.DependsOn, sc)
}

// batchInScope reports whether a batch's callback and every job it still
// holds are in sc: counts of jobs outside it would tell of them.
func (s *Service) batchInScope(ns string, b *engine.BatchRecord, sc tenancy.QueueScope) bool {
	if sc.All() {
		return true
	}
	if !sc.Allows(b.CallbackQueue) {
		return false
	}
	db := s.node.DB()
	p := keys.BatchJobs(ns, b.ID)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return false
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		_, id, err := keys.CreatedID(it.Key())
		if err != nil {
			continue
		}
		if j, err := engine.ReadJob(db, ns, id); err == nil && !sc.Allows(j.Queue) {
			return false
		}
	}
	return true
}

// scopeFilter limits a search or bulk filter to sc: a queue it names must
// be in sc (403 naming prefix+"queue"), and it matches only jobs of
// queues in sc.
func scopeFilter(f *search.Filter, prefix string, sc tenancy.QueueScope) error {
	if f.Queue != "" {
		if err := AllowQueue(sc, prefix+"queue", f.Queue); err != nil {
			return err
		}
	}
	f.Scope = sc
	return nil
}

// splitInScope splits a bulk's job ids into those in sc and the others.
func (s *Service) splitInScope(ns string, ids []string, sc tenancy.QueueScope) (in, out []string) {
	for _, id := range ids {
		if s.inScope(ns, id, sc) {
			in = append(in, id)
		} else {
			out = append(out, id)
		}
	}
	return in, out
}

// unknownIDs counts the ids of a bulk left out for their scope as the
// engine counts unknown ids: an error each, listed among the failures in
// request order (ids).
func unknownIDs(o *engine.BulkOutcome, ids, hidden []string) {
	all := o.Failures
	for _, id := range hidden {
		all = append(all, wire.BulkFailure{JobID: id, Error: apierr.From(jobNotFound(id)).Message})
	}
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	slices.SortStableFunc(all, func(a, b wire.BulkFailure) int { return cmp.Compare(at[a.JobID], at[b.JobID]) })
	o.Errors += int64(len(hidden))
	o.Failures = nil
	o.Add(&engine.BulkOutcome{Failures: all}) // keeps the first ones
}

// opScope is the scope a background operation was started under.
func opScope(op *engine.BulkOp) tenancy.QueueScope {
	if !op.Scoped {
		return tenancy.AllQueues()
	}
	return tenancy.NewQueueScope(op.Scope...)
}

// opVisible reports whether a background operation may be shown under sc:
// everything it could act on (its filter's queue, or else its own scope)
// and a move's target are in sc.
func opVisible(op *engine.BulkOp, sc tenancy.QueueScope) bool {
	if sc.All() {
		return true
	}
	if op.Queue != "" && !sc.Allows(op.Queue) {
		return false
	}
	if f, err := search.ParseFilter(op.Filter); err == nil && f.Queue != "" {
		return sc.Allows(f.Queue)
	}
	if !op.Scoped {
		return false // it acts on every queue
	}
	for _, p := range op.Scope {
		if !sc.Covers(p) {
			return false
		}
	}
	return true
}
