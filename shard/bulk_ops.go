package shard

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/tenancy"
)

// Bulk limits. A bulk by ids, or by a filter matching at most
// Config.BulkSyncMax jobs, runs while the caller waits, in Raft commands of
// Config.BulkChunk jobs; a filter matching more becomes a background
// operation.
const (
	MaxBulkIDs  = 10_000
	MaxBulkSync = 10_000
	bulkChunk   = 1_000
)

// BulkRequest is the body of POST /api/v1/jobs/bulk.
type BulkRequest struct {
	JobIDs      []string        `json:"job_ids"`
	Filter      json.RawMessage `json:"filter"`
	Action      string          `json:"action"`
	MoveToQueue string          `json:"move_to_queue"`
	Priority    string          `json:"priority"`
}

// BulkOpView is a background bulk operation as the API shows it.
type BulkOpView struct {
	ID          string     `json:"id"`
	Action      string     `json:"action"`
	Status      string     `json:"status"`
	Total       int64      `json:"total"`
	Processed   int64      `json:"processed"`
	Affected    int64      `json:"affected"`
	Skipped     int64      `json:"skipped"`
	Errors      int64      `json:"errors"`
	CreatedAt   *time.Time `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	ProgressURL string     `json:"progress_url"`
}

func opView(op *bulkOp) *BulkOpView {
	return &BulkOpView{ID: op.ID, Action: op.Action, Status: op.Status, Total: op.Total, Processed: op.Processed,
		Affected: op.Affected, Skipped: op.Skipped, Errors: op.Errors, CreatedAt: ts(op.CreatedAt),
		FinishedAt: ts(op.FinishedAt), ProgressURL: "/api/v1/bulk/" + op.ID + "/progress"}
}

// bulkPlan is a validated bulk request.
type bulkPlan struct {
	cmd    bulkCmd // action, queue, priority, states
	ids    []string
	filter *search.Filter
	raw    []byte
}

func parseBulk(ns string, r *BulkRequest) (*bulkPlan, error) {
	p := &bulkPlan{cmd: bulkCmd{NS: ns, Action: r.Action}}
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
		if len(r.JobIDs) > MaxBulkIDs {
			return nil, apierr.Field("job_ids", "job_ids holds at most %d ids; got %d (send more in several calls, or use a filter)", MaxBulkIDs, len(r.JobIDs))
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
// MaxBulkSync jobs, with the background operation it started.
func (e *Engine) Bulk(ctx context.Context, ns string, r *BulkRequest) (*BulkOutcome, *BulkOpView, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, nil, err
	}
	p, err := parseBulk(ns, r)
	if err != nil {
		return nil, nil, err
	}
	ids := p.ids
	if p.filter != nil {
		got, err := e.collectMatches(ctx, ns, p.filter, nil, e.cfg.BulkSyncMax+1)
		if err != nil {
			return nil, nil, err
		}
		if len(got.ids) > e.cfg.BulkSyncMax || !got.done {
			op, err := e.startBulkOp(ctx, ns, p, got.total)
			return nil, op, err
		}
		ids = got.ids
	}
	out := &BulkOutcome{}
	for len(ids) > 0 {
		n := min(len(ids), e.cfg.BulkChunk)
		c := p.cmd
		c.IDs = ids[:n]
		res, err := e.propose(ctx, cmdBulkApply, &c)
		if err != nil {
			return nil, nil, err
		}
		out.add(res.(*BulkOutcome))
		ids = ids[n:]
	}
	return out, nil, nil
}

func (e *Engine) startBulkOp(ctx context.Context, ns string, p *bulkPlan, total int64) (*BulkOpView, error) {
	op := &bulkOp{ID: e.newID("bulk_"), Action: p.cmd.Action, Queue: p.cmd.Queue, Priority: p.cmd.Priority,
		Filter: p.raw, Total: total}
	res, err := e.propose(ctx, cmdBulkCreate, &bulkOpCmd{NS: ns, Op: op})
	if err != nil {
		return nil, err
	}
	e.kickBulk()
	return opView(res.(*bulkOp)), nil
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
func (e *Engine) collectMatches(ctx context.Context, ns string, f *search.Filter, from *cand, max int) (*matches, error) {
	snap := e.node.DB().NewSnapshot()
	defer snap.Close()
	ctx = withBudget(ctx, e.cfg.SearchBudget)
	sc, err := e.openScan(snap, ns, f, scanRange{lo: f.Created.After, hi: f.Created.Before, from: from})
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

// BulkStatus reads a background operation from local state.
func (e *Engine) BulkStatus(ns, id string) (*BulkOpView, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(id, "bulk_") || len(id) > 64 {
		return nil, apierr.New(apierr.NotFound, "bulk operation %s not found", id)
	}
	op, err := readBulkOp(e.node.DB(), ns, id)
	if err != nil {
		return nil, err
	}
	return opView(op), nil
}

// CancelBulk stops a background operation after the step it is in.
func (e *Engine) CancelBulk(ctx context.Context, ns, id string) (*BulkOpView, error) {
	if _, err := e.BulkStatus(ns, id); err != nil {
		return nil, err
	}
	res, err := e.propose(ctx, cmdBulkCancel, &bulkOpCmd{NS: ns, ID: id})
	if err != nil {
		return nil, err
	}
	return opView(res.(*bulkOp)), nil
}
