package engine

import (
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// AI budgets: a namespace's daily limits on the usage its namespace, a
// queue or a tag reported (aiusage.go's hourly counters of the entry's
// UTC day). The enqueue apply checks them (checkBudgets): once a budget
// is reached, a job enqueued into its scope is refused (reject), starts
// held with the budget named in its AI record (hold), or the namespace's
// log gets a budget.exceeded event, once per budget and UTC day (alert).
// Approve runs a job a budget held, outside the budget; reject cancels
// it.
var (
	BudgetPut    = replica.Op[BudgetCmd, *BudgetRecord]{Type: 112, Name: "budget.put"}
	BudgetDelete = replica.Op[BudgetNameCmd, replica.None]{Type: 113, Name: "budget.delete"}
	JobApprove   = replica.Op[JobOpCmd, job.State]{Type: 114, Name: "job.approve"}
	JobReject    = replica.Op[JobOpCmd, job.State]{Type: 115, Name: "job.reject"}
	// BudgetPutPerJob is budget.put of a budget with per-job limits, and
	// BulkApplyHeld bulk.apply.settle of the actions approve and reject:
	// a node that knows neither would store the budget without its
	// limits, or skip the jobs, where a node that knows them acts.
	BudgetPutPerJob = replica.Op[BudgetCmd, *BudgetRecord]{Type: 116, Name: "budget.put.per-job"}
	BulkApplyHeld   = replica.Op[BulkCmd, *BulkOutcome]{Type: 117, Name: "bulk.apply.held"}
)

// BudgetPutFor is the op that stores b.
func BudgetPutFor(b *BudgetRecord) replica.Op[BudgetCmd, *BudgetRecord] {
	if b.perJob() {
		return BudgetPutPerJob
	}
	return BudgetPut
}

// BulkApplyFor is the op of a bulk step of action.
func BulkApplyFor(action string) replica.Op[BulkCmd, *BulkOutcome] {
	if action == job.BulkApprove || action == job.BulkReject {
		return BulkApplyHeld
	}
	return BulkApplySettle
}

// EvBudgetExceeded is a budget's alert: Subject the budget, Queue and
// JobID the job whose enqueue found it reached, Detail its scope.
const EvBudgetExceeded = "budget.exceeded"

// CancelBudgetRejected is the cancel_reason of a held job rejected.
const CancelBudgetRejected = "budget_rejected"

// BudgetRecord is one budget (keys.Budget).
type BudgetRecord struct {
	Name           string `codec:"n"`
	Scope          string `codec:"s"`           // wire.BudgetScope*
	Value          string `codec:"v,omitempty"` // the queue, or the tag "key=value"
	DailyCostNanos int64  `codec:"c,omitempty"`
	DailyTokens    int64  `codec:"t,omitempty"`
	// Per-job limits: on what one job reported over all its attempts.
	PerJobCostNanos int64  `codec:"jc,omitempty"`
	PerJobTokens    int64  `codec:"jt,omitempty"`
	OnExceed        string `codec:"x"`
	AlertedDay      int64  `codec:"a,omitempty"` // start (unix ns) of the UTC day it last alerted
	CreatedAt       int64  `codec:"ca"`
	UpdatedAt       int64  `codec:"ua"`
}

// BudgetCmd creates (Create) or replaces a budget.
type BudgetCmd struct {
	NS     string       `codec:"ns"`
	Budget BudgetRecord `codec:"b"`
	Create bool         `codec:"cr,omitempty"`
}

// BudgetNameCmd names one budget.
type BudgetNameCmd struct {
	NS   string `codec:"ns"`
	Name string `codec:"n"`
}

func (c *BudgetCmd) namespace() string     { return c.NS }
func (c *BudgetNameCmd) namespace() string { return c.NS }

func (e *Engine) registerBudgets(r *replica.Registry) {
	BudgetPut.Handle(r, gated(e, e.applyBudgetPut))
	BudgetPutPerJob.Handle(r, gated(e, e.applyBudgetPut))
	BulkApplyHeld.Handle(r, gated(e, e.applyBulkSettle))
	BudgetDelete.Handle(r, gated(e, e.applyBudgetDelete))
	JobApprove.Handle(r, gated(e, withJob(e, e.approveJob)))
	JobReject.Handle(r, gated(e, withJob(e, e.rejectJob)))
}

func budgetNotFound(name string) error {
	return apierr.New(apierr.NotFound, "budget %q not found", name)
}

func (e *Engine) applyBudgetPut(tx *replica.Tx, c *BudgetCmd) (*BudgetRecord, error) {
	old, ok := ReadBudget(tx, c.NS, c.Budget.Name)
	switch {
	case c.Create && ok:
		return nil, apierr.OfField(apierr.Conflict, "name", "budget %q exists", c.Budget.Name)
	case !c.Create && !ok:
		return nil, budgetNotFound(c.Budget.Name)
	case c.Create && len(ReadBudgets(tx, c.NS)) >= wire.MaxBudgets:
		return nil, apierr.New(apierr.Conflict, "the namespace has %d budgets; the limit is %d", wire.MaxBudgets, wire.MaxBudgets)
	}
	b := c.Budget
	b.CreatedAt, b.UpdatedAt, b.AlertedDay = tx.Now.UnixNano(), tx.Now.UnixNano(), 0
	if ok {
		b.CreatedAt, b.AlertedDay = old.CreatedAt, old.AlertedDay
	}
	registerNamespace(tx, c.NS)
	e.putBudget(tx, c.NS, &b)
	return &b, nil
}

func (e *Engine) applyBudgetDelete(tx *replica.Tx, c *BudgetNameCmd) (replica.None, error) {
	if _, ok := ReadBudget(tx, c.NS, c.Name); !ok {
		return replica.None{}, budgetNotFound(c.Name)
	}
	must(tx.Delete(keys.Budget(c.NS, c.Name), nil))
	e.forgetBudgets(c.NS)
	return replica.None{}, nil
}

func (e *Engine) putBudget(tx *replica.Tx, ns string, b *BudgetRecord) {
	must(tx.Set(keys.Budget(ns, b.Name), replica.Encode(b), nil))
	e.forgetBudgets(ns)
}

// forgetBudgets drops the cache of ns's budgets after a write; it is
// read again from the batch. A cache emptied needs no undo.
func (e *Engine) forgetBudgets(ns string) { delete(e.budgets, ns) }

// ReadBudget returns one of ns's budgets as last applied in rd.
func ReadBudget(rd pebble.Reader, ns, name string) (*BudgetRecord, bool) {
	v, ok := get(rd, keys.Budget(ns, name))
	if !ok {
		return nil, false
	}
	b := &BudgetRecord{}
	must(replica.Decode(v, b))
	return b, true
}

// ReadBudgets returns ns's budgets in name order.
func ReadBudgets(rd pebble.Reader, ns string) []*BudgetRecord {
	p := keys.BudgetPrefix(ns)
	it, err := rd.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	var out []*BudgetRecord
	for ok := it.First(); ok; ok = it.Next() {
		b := &BudgetRecord{}
		must(replica.Decode(it.Value(), b))
		out = append(out, b)
	}
	return out
}

// budgetsOf is ns's budgets, through the cache: an enqueue in a namespace
// without budgets reads nothing after its first.
func (e *Engine) budgetsOf(tx *replica.Tx, ns string) []*BudgetRecord {
	bs, ok := e.budgets[ns]
	if !ok {
		bs = ReadBudgets(tx, ns)
		e.budgets[ns] = bs
	}
	return bs
}

// dayOf is the start of the UTC day of t (unix ns).
func dayOf(t int64) int64 { return t - t%(24*hourNs) }

// BudgetSpent is what b's scope reported in the UTC day of now: cost in
// nano-dollars and every kind of token.
func BudgetSpent(r pebble.Reader, ns string, b *BudgetRecord, now int64) (cost, tokens int64) {
	dim, value := keys.AIDimNamespace, ""
	switch b.Scope {
	case wire.BudgetScopeQueue:
		dim, value = keys.AIDimQueue, b.Value
	case wire.BudgetScopeTag:
		dim, value = keys.AIDimTag, b.Value
	}
	for h := dayOf(now); h <= now; h += hourNs {
		v, ok := get(r, keys.AIUsage(ns, h, dim, value))
		if !ok {
			continue
		}
		bk, err := DecodeAIBucket(v)
		must(err)
		cost += bk.Usage.CostNanos
		tokens += bk.Usage.tokens()
	}
	return cost, tokens
}

// Reached reports whether spent reaches one of b's limits.
func (b *BudgetRecord) Reached(cost, tokens int64) bool {
	return (b.DailyCostNanos > 0 && cost >= b.DailyCostNanos) || (b.DailyTokens > 0 && tokens >= b.DailyTokens)
}

// covers reports whether j is in b's scope.
func (b *BudgetRecord) covers(j *job.Job) bool {
	switch b.Scope {
	case wire.BudgetScopeQueue:
		return j.Queue == b.Value
	case wire.BudgetScopeTag:
		k, v, _ := strings.Cut(b.Value, "=")
		tv, ok := j.Tags[k]
		return ok && tv == v
	}
	return true
}

// budgetVerdict is what the reached budgets say of one enqueue.
type budgetVerdict struct {
	reached []*BudgetRecord
}

// checkBudgets finds ns's reached budgets, and refuses the command (429
// naming the budget) when one that rejects covers one of its jobs,
// before anything is written. Nil when none is reached.
func (e *Engine) checkBudgets(tx *replica.Tx, c *EnqueueCmd) (*budgetVerdict, error) {
	bs := e.budgetsOf(tx, c.NS)
	if len(bs) == 0 {
		return nil, nil
	}
	now := tx.Now.UnixNano()
	v := &budgetVerdict{}
	for _, b := range bs {
		if b.Reached(BudgetSpent(tx, c.NS, b, now)) {
			v.reached = append(v.reached, b)
		}
	}
	if len(v.reached) == 0 {
		return nil, nil
	}
	for _, rec := range c.Jobs {
		j := new(job.Job)
		must(j.Decode(rec))
		for _, b := range v.reached {
			if b.OnExceed == wire.BudgetReject && b.covers(j) {
				return nil, apierr.New(apierr.BudgetExceeded, "budget %q is exceeded for today (UTC): its queue, tag or namespace may not enqueue until tomorrow or a change of the budget", b.Name)
			}
		}
	}
	return v, nil
}

// apply decides a new job under the reached budgets: the budget that
// holds it (""), and the alerts it raises, once per budget and day.
func (v *budgetVerdict) holdOf(e *Engine, tx *replica.Tx, ns string, j *job.Job) string {
	if v == nil {
		return ""
	}
	hold := ""
	for _, b := range v.reached {
		if !b.covers(j) {
			continue
		}
		switch b.OnExceed {
		case wire.BudgetHold:
			if hold == "" {
				hold = b.Name
			}
		case wire.BudgetAlert:
			if day := dayOf(tx.Now.UnixNano()); b.AlertedDay != day {
				b.AlertedDay = day
				e.putBudget(tx, ns, b)
				e.logEvent(tx, ns, Event{Type: EvBudgetExceeded, Subject: b.Name, Queue: j.Queue, JobID: j.ID, Detail: b.Scope})
			}
		}
	}
	return hold
}

// holdForBudget marks a job just inserted held as held by budget name.
func (e *Engine) holdForBudget(tx *replica.Tx, ns string, j *job.Job, name string) {
	rec, err := ReadJobAI(tx, ns, j.ID)
	must(err)
	if rec == nil {
		rec = &JobAI{}
	}
	rec.HeldBy = name
	must(tx.Set(keys.JobAI(ns, j.ID), rec.encode(), nil))
}

// heldBy is the budget holding j, or "".
func heldBy(tx *replica.Tx, ns string, j *job.Job) string {
	if j.State != job.Held {
		return ""
	}
	rec, err := ReadJobAI(tx, ns, j.ID)
	must(err)
	if rec == nil {
		return ""
	}
	return rec.HeldBy
}

func notHeldByBudget(id string) error {
	return apierr.New(apierr.Conflict, "job %s is not held by a budget", id)
}

// approveJob runs a job a budget held: pending (scheduled while its
// scheduled_at is ahead), outside every budget from then on (its record
// says it was approved, so a fetch does not hold it again).
func (e *Engine) approveJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (job.State, error) {
	if heldBy(tx, c.NS, j) == "" {
		return 0, notHeldByBudget(c.ID)
	}
	e.clearBudgetHold(tx, c.NS, j.ID, true)
	to := job.Initial(j.ScheduledAt, tx.Now.UnixNano(), false)
	e.moveTo(tx, c.NS, j, to)
	e.putJob(tx, c.NS, j)
	if to == job.Pending {
		e.wake(tx, c.NS, j.Queue, 1)
	}
	return to, nil
}

// rejectJob cancels a job a budget held.
func (e *Engine) rejectJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (job.State, error) {
	if heldBy(tx, c.NS, j) == "" {
		return 0, notHeldByBudget(c.ID)
	}
	e.clearBudgetHold(tx, c.NS, j.ID, false)
	j.CancelReason = CancelBudgetRejected
	e.moveTo(tx, c.NS, j, job.Cancelled)
	e.putJob(tx, c.NS, j)
	return job.Cancelled, nil
}

func (e *Engine) clearBudgetHold(tx *replica.Tx, ns, id string, approved bool) {
	rec, err := ReadJobAI(tx, ns, id)
	must(err)
	rec.HeldBy, rec.Approved = "", approved
	must(tx.Set(keys.JobAI(ns, id), rec.encode(), nil))
}

// PerJobDetail is the Detail of a budget.exceeded event a per-job limit
// raised (a daily limit's is the budget's scope).
const PerJobDetail = "per_job"

// overPerJob reports whether a job's totals u pass one of b's per-job
// limits (a job may spend up to the limit).
func (b *BudgetRecord) overPerJob(u *AIUsage) bool {
	return b.PerJobCostNanos > 0 && u.CostNanos > b.PerJobCostNanos || b.PerJobTokens > 0 && u.tokens() > b.PerJobTokens
}

func (b *BudgetRecord) perJob() bool { return b.PerJobCostNanos > 0 || b.PerJobTokens > 0 }

// perJobAlerts logs budget.exceeded for each alerting budget whose
// per-job limit j's report took its totals past: the report that
// crosses, so once per job and budget.
func (e *Engine) perJobAlerts(tx *replica.Tx, ns string, j *job.Job, before, after *AIUsage) {
	for _, b := range e.budgetsOf(tx, ns) {
		if b.OnExceed == wire.BudgetAlert && b.covers(j) && !b.overPerJob(before) && b.overPerJob(after) {
			e.logEvent(tx, ns, Event{Type: EvBudgetExceeded, Subject: b.Name, Queue: j.Queue, JobID: j.ID, Detail: PerJobDetail})
		}
	}
}

// fetchHolds is a fetch command's look at its namespace's budgets: the
// hold budgets whose daily limit is reached and the hold and reject
// budgets with per-job limits, read once per command (a budget's spend
// is up to 24 hourly counters, and nothing a fetch does adds usage), not
// once per job.
type fetchHolds struct {
	read    bool
	reached []*BudgetRecord
	perJob  []*BudgetRecord
}

// fetchBudget is what the budgets say of j as it is about to be fetched:
// the budget that holds it (a reached daily limit, or a passed per-job
// limit, of a hold budget), or the budget that rejects it (a passed
// per-job limit of a reject budget: it gets no further attempt); "" for
// none, and for a job approved. Reject wins over hold. A namespace
// without budgets reads nothing (the cache), and a job's AI record is
// read only when a budget covering it may act on it.
func (e *Engine) fetchBudget(tx *replica.Tx, ns string, j *job.Job, h *fetchHolds) (hold, reject string) {
	if !h.read {
		h.read = true
		now := tx.Now.UnixNano()
		for _, b := range e.budgetsOf(tx, ns) {
			if b.OnExceed == wire.BudgetHold && b.Reached(BudgetSpent(tx, ns, b, now)) {
				h.reached = append(h.reached, b)
			}
			if b.OnExceed != wire.BudgetAlert && b.perJob() {
				h.perJob = append(h.perJob, b)
			}
		}
	}
	if len(h.reached) == 0 && len(h.perJob) == 0 {
		return "", ""
	}
	var rec *JobAI
	read := false
	ai := func() *JobAI {
		if !read {
			var err error
			rec, err = ReadJobAI(tx, ns, j.ID)
			must(err)
			read = true
		}
		return rec
	}
	for _, b := range h.perJob {
		if !b.covers(j) || ai() == nil || !b.overPerJob(&rec.Usage) {
			continue
		}
		if rec.Approved {
			return "", ""
		}
		if b.OnExceed == wire.BudgetReject {
			return "", b.Name
		}
		if hold == "" {
			hold = b.Name
		}
	}
	if hold == "" {
		for _, b := range h.reached {
			if b.covers(j) {
				hold = b.Name
				break
			}
		}
	}
	if hold != "" && ai() != nil && rec.Approved {
		return "", ""
	}
	return hold, ""
}

// failRejects reports whether a failed attempt of j gets no retry: a
// reject budget's per-job limit covering it is passed, and j was not
// approved.
func (e *Engine) failRejects(tx *replica.Tx, ns string, j *job.Job) bool {
	var rec *JobAI
	for _, b := range e.budgetsOf(tx, ns) {
		if b.OnExceed != wire.BudgetReject || !b.perJob() || !b.covers(j) {
			continue
		}
		if rec == nil {
			var err error
			if rec, err = ReadJobAI(tx, ns, j.ID); err != nil || rec == nil {
				must(err)
				return false
			}
		}
		if !rec.Approved && b.overPerJob(&rec.Usage) {
			return true
		}
	}
	return false
}
