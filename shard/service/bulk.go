package service

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// defaultBulkChunk is Config.BulkChunk's default: jobs per Raft command
// of a bulk. A bulk by ids, or by a filter matching at most
// Config.BulkSyncMax jobs, runs while the caller waits; a filter matching
// more becomes a background operation.
const defaultBulkChunk = 1_000

// bulkPlan is a validated bulk request.
type bulkPlan struct {
	cmd    engine.BulkCmd // action, queue, priority, states
	ids    []string
	filter *search.Filter
	raw    []byte
}

func parseBulk(ns string, sc tenancy.QueueScope, r *wire.BulkRequest) (*bulkPlan, error) {
	p := &bulkPlan{cmd: engine.BulkCmd{NS: ns, Action: r.Action}}
	if r.Action == "" {
		return nil, apierr.Field("action", "action is required: one of %s", strings.Join(job.BulkActions(), ", "))
	}
	if !job.IsBulkAction(r.Action) {
		return nil, apierr.Field("action", "action %q is not one of %s", r.Action, strings.Join(job.BulkActions(), ", "))
	}
	switch {
	case r.Action == job.BulkMove:
		if r.MoveToQueue == "" {
			return nil, apierr.Field("move_to_queue", "move needs move_to_queue")
		}
		if err := tenancy.ValidateQueue(r.MoveToQueue); err != nil {
			return nil, apierr.Field("move_to_queue", "move_to_queue: %v", err)
		}
		if err := AllowQueue(sc, "move_to_queue", r.MoveToQueue); err != nil {
			return nil, err
		}
		p.cmd.Queue = r.MoveToQueue
	case r.MoveToQueue != "":
		return nil, apierr.Field("move_to_queue", "move_to_queue goes only with action move")
	}
	switch {
	case r.Action == job.BulkChangePriority:
		if r.Priority == "" {
			return nil, apierr.Field("priority", "change_priority needs priority")
		}
		prio, err := job.ParsePriority(r.Priority)
		if err != nil {
			return nil, apierr.Field("priority", "%v", err)
		}
		p.cmd.Priority = uint8(prio)
	case r.Priority != "":
		return nil, apierr.Field("priority", "priority goes only with action change_priority")
	}
	hasFilter := len(r.Filter) > 0 && string(bytes.TrimSpace(r.Filter)) != "null"
	switch {
	case len(r.JobIDs) > 0 && hasFilter:
		return nil, apierr.Field("filter", "send job_ids or filter, not both")
	case len(r.JobIDs) > 0:
		if len(r.JobIDs) > wire.MaxBulkIDs {
			return nil, apierr.Field("job_ids", "job_ids holds at most %d ids; got %d (send more in several calls, or use a filter)", wire.MaxBulkIDs, len(r.JobIDs))
		}
		seen := make(map[string]bool, len(r.JobIDs))
		for i, id := range r.JobIDs {
			if len(id) != keys.JobIDLen || !strings.HasPrefix(id, "job_") {
				return nil, apierr.Field("job_ids", "job_ids[%d]: %q is not a job id", i, id)
			}
			if !seen[id] {
				seen[id] = true
				p.ids = append(p.ids, id)
			}
		}
	case hasFilter:
		f, err := search.ParseFilter(r.Filter)
		if err != nil {
			return nil, err
		}
		if f.IsEmpty() {
			return nil, apierr.Field("filter", "filter must set at least one field (to act on every job, name the states)")
		}
		if _, err := search.Compile(f); err != nil {
			return nil, err
		}
		if err := scopeFilter(f, "filter.", sc); err != nil {
			return nil, err
		}
		p.filter, p.raw = f, r.Filter
		for _, s := range f.States {
			p.cmd.States = append(p.cmd.States, uint8(s))
		}
	default:
		return nil, apierr.Field("job_ids", "send job_ids (a list of job ids) or filter (a search filter)")
	}
	return p, nil
}

// Bulk applies an action to jobs named by id or matched by a filter. It
// answers with the outcome, or, for a filter matching more than
// Config.BulkSyncMax jobs, with the background operation it started.
// Under a limited scope a filter matches only jobs of queues in it (the
// operation keeps the scope), and an id of a job outside it fails as an
// unknown id does.
func (s *Service) Bulk(ctx context.Context, ns string, sc tenancy.QueueScope, r *wire.BulkRequest) (*wire.BulkResult, *wire.BulkAccepted, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, nil, err
	}
	p, err := parseBulk(ns, sc, r)
	if err != nil {
		return nil, nil, err
	}
	ids, hidden := p.ids, []string(nil)
	if p.filter != nil {
		got, err := s.collectMatches(ctx, ns, p.filter, nil, s.cfg.BulkSyncMax+1)
		if err != nil {
			return nil, nil, err
		}
		if len(got.ids) > s.cfg.BulkSyncMax || !got.done {
			op, err := s.startBulkOp(ctx, ns, p, got.total, sc)
			return nil, op, err
		}
		ids = got.ids
	} else if !sc.All() {
		ids, hidden = s.splitInScope(ns, ids, sc)
	}
	out := &engine.BulkOutcome{}
	for len(ids) > 0 {
		n := min(len(ids), s.cfg.BulkChunk)
		c := p.cmd
		c.IDs = ids[:n]
		res, err := engine.BulkApplyFor(c.Action).Propose(ctx, s.node, &c)
		if err != nil {
			return nil, nil, err
		}
		out.Add(res)
		ids = ids[n:]
	}
	if len(hidden) > 0 {
		unknownIDs(out, p.ids, hidden)
	}
	res := &wire.BulkResult{Affected: out.Affected, Skipped: out.Skipped, Errors: out.Errors, Failures: out.Failures}
	if res.Failures == nil {
		res.Failures = []wire.BulkFailure{}
	}
	return res, nil, nil
}

func (s *Service) startBulkOp(ctx context.Context, ns string, p *bulkPlan, total int64, sc tenancy.QueueScope) (*wire.BulkAccepted, error) {
	op := &engine.BulkOp{ID: s.NewID("bulk_"), Action: p.cmd.Action, Queue: p.cmd.Queue, Priority: p.cmd.Priority,
		Filter: p.raw, Total: total, Prunable: true}
	create := engine.BulkCreate
	if !sc.All() {
		op.Scoped, op.Scope = true, sc.Patterns()
		create = engine.BulkCreateScoped
	}
	res, err := create.Propose(ctx, s.node, &engine.BulkOpCmd{NS: ns, Op: op})
	if err != nil {
		return nil, err
	}
	select { // tell the leader's bulk loop
	case s.bulkKick <- struct{}{}:
	default:
	}
	v := opView(res)
	return &wire.BulkAccepted{BulkOperationID: v.ID, Status: v.Status, EstimatedTotal: v.Total, ProgressURL: v.ProgressURL}, nil
}

// matches is a run of a filter's matches in creation order.
type matches struct {
	ids   []string
	next  cand  // the last job scanned; the run continues after it
	done  bool  // nothing matches past next
	total int64 // all matches when the counts give it, else the ones found
}

// collectMatches scans, oldest first from after `from`, for at most max
// jobs matching f, within the search budget.
func (s *Service) collectMatches(ctx context.Context, ns string, f *search.Filter, from *cand, max int) (*matches, error) {
	snap := s.node.DB().NewSnapshot()
	defer snap.Close()
	ctx = withBudget(ctx, s.cfg.SearchBudget)
	sc, err := s.openScan(snap, ns, f, scanRange{lo: f.Created.After, hi: f.Created.Before, from: from})
	if err != nil {
		return nil, err
	}
	defer sc.close()
	out := &matches{}
	if from != nil {
		out.next = *from
	}
	for n := 1; ; n++ {
		if n%checkEvery == 0 && overBudget(ctx) {
			break
		}
		c, _, match, ok := sc.next(ctx)
		if !ok {
			out.done = true
			break
		}
		out.next = c
		if !match {
			continue
		}
		out.ids = append(out.ids, c.id)
		if len(out.ids) == max {
			break
		}
	}
	out.total = int64(len(out.ids))
	if sc.total >= 0 {
		out.total = sc.total
	}
	return out, nil
}

func encodeCand(c cand) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(c.created)), c.id...)
}

func decodeCand(b []byte) (*cand, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("shard: bulk cursor of %d bytes", len(b))
	}
	return &cand{int64(binary.BigEndian.Uint64(b)), string(b[8:])}, nil
}

// BulkStatus reads a background operation from local state: not found
// under a scope it is not visible to (opVisible).
func (s *Service) BulkStatus(ns string, sc tenancy.QueueScope, id string) (*wire.BulkOperation, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	notFound := apierr.New(apierr.NotFound, "bulk operation %s not found", id)
	if !strings.HasPrefix(id, "bulk_") || len(id) > 64 {
		return nil, notFound
	}
	op, err := engine.ReadBulkOp(s.node.DB(), ns, id)
	if err != nil {
		return nil, err
	}
	if !opVisible(op, sc) {
		return nil, notFound
	}
	return opView(op), nil
}

// CancelBulk stops a background operation after the step it is in.
func (s *Service) CancelBulk(ctx context.Context, ns string, sc tenancy.QueueScope, id string) (*wire.BulkOperation, error) {
	if _, err := s.BulkStatus(ns, sc, id); err != nil {
		return nil, err
	}
	res, err := engine.BulkCancel.Propose(ctx, s.node, &engine.BulkOpCmd{NS: ns, ID: id})
	if err != nil {
		return nil, err
	}
	return opView(res), nil
}

// BulkKicks receives when a background operation was started, so the
// leader's bulk loop need not wait for its next tick.
func (s *Service) BulkKicks() <-chan struct{} { return s.bulkKick }

// BulkOpRef names a background operation.
type BulkOpRef struct{ NS, ID string }

// RunningBulkOps lists the operations still processing, oldest first per
// namespace.
func (s *Service) RunningBulkOps() []BulkOpRef {
	db := s.node.DB()
	var out []BulkOpRef
	for _, ns := range engine.Namespaces(db) {
		if s.Moving(ns) != "" {
			continue // a move holds it
		}
		p := keys.BulkOpPrefix(ns)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
		if err != nil {
			continue
		}
		for ok := it.First(); ok; ok = it.Next() {
			var op engine.BulkOp
			if replica.Decode(it.Value(), &op) == nil && op.Status == wire.BulkProcessing {
				out = append(out, BulkOpRef{ns, op.ID})
			}
		}
		_ = it.Close()
	}
	return out
}

// BulkStep takes the next step of a background operation: the next chunk
// of its matches, applied with the operation's cursor moving in the same
// command, so a step is applied once even when a new leader proposes it
// again. done is true once the operation is finished or cancelled.
func (s *Service) BulkStep(ctx context.Context, ref BulkOpRef) (done bool, err error) {
	op, err := engine.ReadBulkOp(s.node.DB(), ref.NS, ref.ID)
	if err != nil || op.Status != wire.BulkProcessing {
		return true, err
	}
	f, err := search.ParseFilter(op.Filter)
	if err != nil {
		return true, err // validated at the start: cannot happen
	}
	f.Scope = opScope(op)
	from, err := decodeCand(op.Cursor)
	if err != nil {
		return true, err
	}
	got, err := s.collectMatches(ctx, ref.NS, f, from, s.cfg.BulkChunk)
	if err != nil {
		return false, err
	}
	c := &engine.BulkCmd{NS: ref.NS, Action: op.Action, IDs: got.ids, Queue: op.Queue, Priority: op.Priority,
		Op: op.ID, From: op.Cursor, Next: encodeCand(got.next), Done: got.done}
	for _, st := range f.States {
		c.States = append(c.States, uint8(st))
	}
	_, err = engine.BulkApplyFor(c.Action).Propose(ctx, s.node, c)
	return false, err
}
