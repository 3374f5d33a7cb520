package service

import (
	"sort"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// AI usage (engine/aiusage.go): the reports the worker calls carry, a
// job's totals, and the namespace's hourly counters.

// usageOf checks a worker call's usage report; nil when it reports
// nothing.
func usageOf(field string, u *wire.AIUsage) (*engine.AIUsage, error) {
	c, err := wire.CheckAIUsage(field, u)
	if err != nil {
		return nil, apierr.Invalid(err)
	}
	return engine.UsageOf(c), nil
}

// jobAI adds a job's usage totals (absent when no worker reported any)
// and the budget that holds it to its detail.
func (s *Service) jobAI(ns string, d *wire.JobDetail) error {
	rec, err := engine.ReadJobAI(s.node.DB(), ns, d.ID)
	if err != nil || rec == nil {
		return err
	}
	if rec.Reports > 0 {
		d.Usage = rec.Usage.Counts().View()
	}
	if d.State == wire.StateHeld {
		d.HeldReason, d.HeldBudget = heldView(rec.HeldBy)
	}
	return nil
}

// heldView is a held job's held_reason and held_budget when budget
// holds it ("" when none does: its dependencies hold it).
func heldView(budget string) (reason, name string) {
	if budget == "" {
		return "", ""
	}
	return wire.HeldReasonBudget, budget
}

// heldBy is the budget that holds a held job, from its AI record; ""
// for none.
func (s *Service) heldBy(ns, id string) string {
	rec, err := engine.ReadJobAI(s.node.DB(), ns, id)
	if err != nil || rec == nil {
		return ""
	}
	return rec.HeldBy
}

// heldBy is the budget that holds the (held) job, from its AI record;
// "" for none.
func (r *recordReader) heldBy(id string) string {
	rec, err := engine.ReadJobAI(r.rd, r.ns, id)
	if err != nil || rec == nil {
		return ""
	}
	return rec.HeldBy
}

var aiDims = map[string]byte{
	wire.AIGroupNamespace: keys.AIDimNamespace,
	wire.AIGroupQueue:     keys.AIDimQueue,
	wire.AIGroupModel:     keys.AIDimModel,
	wire.AIGroupTag:       keys.AIDimTag,
}

// AIUsage answers GET /api/v1/ai/usage from the node's own store: ns's
// usage over whole UTC hours, per group, and per step when step is set.
// A key limited to some queues sees those queues' usage only, so it may
// group by queue alone (the other groupings sum every queue).
func (s *Service) AIUsage(ns string, sc tenancy.QueueScope, from, to, groupBy, step string) (*wire.AIUsageResponse, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	g, err := wire.CheckAIGroupBy(groupBy)
	if err != nil {
		return nil, apierr.Invalid(err)
	}
	if !sc.All() && g != wire.AIGroupQueue {
		return nil, apierr.OfField(apierr.Forbidden, "group_by", "this key may read the usage of some queues only: group_by=queue")
	}
	q, err := wire.ParseUsageQuery(time.Unix(0, s.now()).UTC(), from, to, wire.GranularityHour)
	if err != nil {
		return nil, apierr.Invalid(err)
	}
	st, err := wire.ParseAIStep(step)
	if err == nil && st > 0 {
		_, err = wire.AIUsageSteps(q.From, q.To, st)
	}
	if err != nil {
		return nil, apierr.Invalid(err)
	}
	total, steps, err := engine.ReadAIUsageSteps(s.node.DB(), ns, aiDims[g], q.From.UnixNano(), q.To.UnixNano(), int64(st))
	if err != nil {
		return nil, err
	}
	out := &wire.AIUsageResponse{From: q.From, To: q.To, GroupBy: g, Groups: aiGroups(ns, sc, g, total)}
	if st > 0 {
		out.Step = wire.FormatAIStep(st)
		out.Buckets = make([]wire.AIUsageBucket, len(steps))
		for i, sums := range steps {
			out.Buckets[i] = wire.AIUsageBucket{Start: q.From.Add(time.Duration(i) * st), Groups: aiGroups(ns, sc, g, sums)}
		}
	}
	return out, nil
}

// aiGroups are sums as the answer's groups, ordered by key: the queues
// scope allows only, the namespace's group named as its tenant knows it.
func aiGroups(ns string, sc tenancy.QueueScope, g string, sums map[string]*engine.AIBucket) []wire.AIUsageGroup {
	out := []wire.AIUsageGroup{}
	for k, b := range sums {
		if g == wire.AIGroupQueue && !sc.Allows(k) {
			continue
		}
		if g == wire.AIGroupNamespace {
			if _, name, err := tenancy.ParseShardNamespace(ns); err == nil {
				k = name
			}
		}
		u := b.Usage
		out = append(out, wire.AIUsageGroup{Key: k, Reports: b.Reports, InputTokens: u.Input, OutputTokens: u.Output,
			CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, CostUSD: wire.FormatCostUSD(u.CostNanos)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
