package service

import (
	"context"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// AI budgets (engine/budgets.go): checked here, proposed, and shown with
// what their scope reported today, read from the node's own store. A
// budget spans queues, so a key limited to some queues may not see or
// change them (403).

// budgetName checks a budget's name: 1 to 64 bytes of letters, digits,
// '-', '_' and '.'.
func budgetName(field, name string) error {
	if name == "" || len(name) > wire.MaxBudgetNameBytes {
		return apierr.Field(field, "%s must be 1 to %d bytes; got %d", field, wire.MaxBudgetNameBytes, len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return apierr.Field(field, "%s may hold letters, digits, '-', '_' and '.' only", field)
		}
	}
	return nil
}

// budgetOf checks a spec into a record.
func budgetOf(name string, sp *wire.BudgetSpec) (engine.BudgetRecord, error) {
	b := engine.BudgetRecord{Name: name, Scope: sp.Scope, OnExceed: sp.OnExceed, DailyTokens: sp.DailyTokens}
	switch sp.Scope {
	case wire.BudgetScopeNamespace:
		if sp.Queue != "" || sp.Tag != "" {
			return b, apierr.Field("scope", "a namespace budget names no queue and no tag")
		}
	case wire.BudgetScopeQueue:
		if err := tenancy.ValidateQueue(sp.Queue); err != nil {
			return b, apierr.Field("queue", "%v", err)
		}
		if sp.Tag != "" {
			return b, apierr.Field("tag", "a queue budget names no tag")
		}
		b.Value = sp.Queue
	case wire.BudgetScopeTag:
		k, v, ok := strings.Cut(sp.Tag, "=")
		if !ok || k == "" || len(k) > wire.MaxTagKey || len(v) > wire.MaxTagValue {
			return b, apierr.Field("tag", "tag must be key=value (a key of 1 to %d bytes, a value of at most %d)", wire.MaxTagKey, wire.MaxTagValue)
		}
		if sp.Queue != "" {
			return b, apierr.Field("queue", "a tag budget names no queue")
		}
		b.Value = sp.Tag
	default:
		return b, apierr.Field("scope", "scope must be namespace, queue or tag, not %q", sp.Scope)
	}
	switch sp.OnExceed {
	case wire.BudgetHold, wire.BudgetReject, wire.BudgetAlert:
	default:
		return b, apierr.Field("on_exceed", "on_exceed must be hold, reject or alert, not %q", sp.OnExceed)
	}
	if sp.DailyCostUSD != "" {
		n, err := wire.ParseCostUSD(sp.DailyCostUSD)
		if err != nil || n == 0 {
			return b, apierr.Field("daily_cost_usd", "daily_cost_usd must be a positive decimal of dollars such as \"25.50\"")
		}
		b.DailyCostNanos = n
	}
	if sp.DailyTokens < 0 {
		return b, apierr.Field("daily_tokens", "daily_tokens must be positive")
	}
	if sp.PerJobCostUSD != "" {
		n, err := wire.ParseCostUSD(sp.PerJobCostUSD)
		if err != nil || n == 0 {
			return b, apierr.Field("per_job_cost_usd", "per_job_cost_usd must be a positive decimal of dollars such as \"0.50\"")
		}
		b.PerJobCostNanos = n
	}
	if sp.PerJobTokens < 0 {
		return b, apierr.Field("per_job_tokens", "per_job_tokens must be positive")
	}
	b.PerJobTokens = sp.PerJobTokens
	if b.DailyCostNanos == 0 && b.DailyTokens == 0 && b.PerJobCostNanos == 0 && b.PerJobTokens == 0 {
		return b, apierr.Field("daily_cost_usd", "a budget needs a limit: daily_cost_usd, daily_tokens, per_job_cost_usd or per_job_tokens")
	}
	return b, nil
}

func (s *Service) budgetView(ns string, b *engine.BudgetRecord) *wire.Budget {
	cost, tokens := engine.BudgetSpent(s.node.DB(), ns, b, s.now())
	v := &wire.Budget{BudgetSpec: wire.BudgetSpec{Name: b.Name, Scope: b.Scope, DailyTokens: b.DailyTokens, OnExceed: b.OnExceed},
		SpentTodayUSD: wire.FormatCostUSD(cost), SpentTodayTokens: tokens, Exceeded: b.Reached(cost, tokens),
		CreatedAt: time.Unix(0, b.CreatedAt).UTC(), UpdatedAt: time.Unix(0, b.UpdatedAt).UTC()}
	if b.DailyCostNanos > 0 {
		v.DailyCostUSD = wire.FormatCostUSD(b.DailyCostNanos)
	}
	if b.PerJobCostNanos > 0 {
		v.PerJobCostUSD = wire.FormatCostUSD(b.PerJobCostNanos)
	}
	v.PerJobTokens = b.PerJobTokens
	switch b.Scope {
	case wire.BudgetScopeQueue:
		v.Queue = b.Value
	case wire.BudgetScopeTag:
		v.Tag = b.Value
	}
	return v
}

// PutBudget creates a budget (create, the name in the body) or replaces
// one (the name in the path; the body's, if any, must be the same).
func (s *Service) PutBudget(ctx context.Context, ns string, sc tenancy.QueueScope, name string, create bool, sp *wire.BudgetSpec) (*wire.Budget, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := WholeNamespace(sc); err != nil {
		return nil, err
	}
	if create {
		name = sp.Name
	} else if sp.Name != "" && sp.Name != name {
		return nil, apierr.Field("name", "name must be the path's budget, %q, or left out", name)
	}
	if err := budgetName("name", name); err != nil {
		return nil, err
	}
	b, err := budgetOf(name, sp)
	if err != nil {
		return nil, err
	}
	rec, err := engine.BudgetPutFor(&b).Propose(ctx, s.node, &engine.BudgetCmd{NS: ns, Budget: b, Create: create})
	if err != nil {
		return nil, err
	}
	return s.budgetView(ns, rec), nil
}

// GetBudget reads one budget.
func (s *Service) GetBudget(ns string, sc tenancy.QueueScope, name string) (*wire.Budget, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := WholeNamespace(sc); err != nil {
		return nil, err
	}
	b, ok := engine.ReadBudget(s.node.DB(), ns, name)
	if !ok {
		return nil, apierr.New(apierr.NotFound, "budget %q not found", name)
	}
	return s.budgetView(ns, b), nil
}

// ListBudgets reads the namespace's budgets in name order.
func (s *Service) ListBudgets(ns string, sc tenancy.QueueScope) (*wire.BudgetList, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := WholeNamespace(sc); err != nil {
		return nil, err
	}
	out := &wire.BudgetList{Budgets: []wire.Budget{}}
	for _, b := range engine.ReadBudgets(s.node.DB(), ns) {
		out.Budgets = append(out.Budgets, *s.budgetView(ns, b))
	}
	return out, nil
}

// DeleteBudget removes a budget; the jobs it holds stay held until
// approved or rejected.
func (s *Service) DeleteBudget(ctx context.Context, ns string, sc tenancy.QueueScope, name string) error {
	if err := namespaceOK(ns); err != nil {
		return err
	}
	if err := WholeNamespace(sc); err != nil {
		return err
	}
	_, err := engine.BudgetDelete.Propose(ctx, s.node, &engine.BudgetNameCmd{NS: ns, Name: name})
	return err
}

// ApproveJob runs a job a budget held, outside the budget; RejectJob
// cancels it.
func (s *Service) ApproveJob(ctx context.Context, ns string, sc tenancy.QueueScope, id string) (*wire.ApproveResponse, error) {
	st, err := jobOp(ctx, s, sc, engine.JobApprove, &engine.JobOpCmd{NS: ns, ID: id})
	if err != nil {
		return nil, err
	}
	return &wire.ApproveResponse{JobID: id, Status: st.String()}, nil
}

func (s *Service) RejectJob(ctx context.Context, ns string, sc tenancy.QueueScope, id string) (*wire.ApproveResponse, error) {
	st, err := jobOp(ctx, s, sc, engine.JobReject, &engine.JobOpCmd{NS: ns, ID: id})
	if err != nil {
		return nil, err
	}
	return &wire.ApproveResponse{JobID: id, Status: st.String()}, nil
}
