package admin

import (
	"math"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Usage serves GET /api/v1/usage from control's ledger. A namespace filter must
// be one the key may use and read usage in (403 otherwise). Without one,
// a key that may read usage in every namespace of its tenant gets the
// tenant's whole usage, api requests included; any other gets the
// namespaces it may read, and tenant buckets and totals of those alone
// (api requests are counted per tenant, so they are left out).
func (a *Admin) Usage(c *fiber.Ctx, r *admitted.Request) error {
	ns := c.Query("namespace")
	if ns != "" {
		if err := tenancy.ValidateNamespace(ns); err != nil {
			return apierr.Field("namespace", "%v", err)
		}
		if !r.Key.AllowsNamespace(ns) {
			return apierr.New(apierr.Forbidden, "API key %s may not use namespace %q", r.Key.Subject, ns)
		}
		if err := a.gate.AuthorizeIn(r, ns, tenancy.ActUsageRead); err != nil {
			return err
		}
	}
	// Parsed here as control parses it, so bad input is refused before
	// control is asked, and the defaults are this gateway's now.
	uq, err := wire.ParseUsageQuery(a.clock.Now(), c.Query("from"), c.Query("to"), c.Query("granularity"))
	if err != nil {
		return apierr.Invalid(err)
	}
	uq.Namespace = ns
	u, err := a.control.Usage(a.ctx, r.RequestID, r.Key.TenantID, uq)
	if err != nil {
		return a.tell(r, err)
	}
	if ns == "" && !admission.ReadsAllUsage(r) {
		if err := a.narrowUsage(r, &u); err != nil {
			return err
		}
	}
	return c.JSON(u)
}

// narrowUsage keeps the namespaces r may read usage in and rebuilds the
// tenant's buckets and totals from them. A tenant bucket keeps control's
// incomplete flag, which is over all of the tenant's namespaces.
func (a *Admin) narrowUsage(r *admitted.Request, u *wire.Usage) error {
	kept := u.Namespaces[:0]
	for _, nm := range u.Namespaces {
		if !r.Key.AllowsNamespace(nm.Namespace) {
			continue
		}
		ok, err := a.gate.AllowedIn(r, nm.Namespace, tenancy.ActUsageRead)
		if err != nil {
			return err
		}
		if ok {
			kept = append(kept, nm)
		}
	}
	u.Namespaces = kept
	sums := make(map[int64]*exactMeters, len(u.Tenant)) // by bucket start, unix seconds
	for i := range u.Tenant {
		sums[u.Tenant[i].Start.Unix()] = &exactMeters{}
	}
	var total exactMeters
	for _, nm := range kept {
		for _, b := range nm.Buckets {
			if m, ok := sums[b.Start.Unix()]; ok {
				m.add(b.Meters)
			}
		}
		total.add(nm.Totals)
	}
	for i := range u.Tenant {
		u.Tenant[i].Meters = sums[u.Tenant[i].Start.Unix()].view()
	}
	u.Totals = total.view()
	return nil
}

// exactMeters sums wire.UsageMeters in the integers they were derived
// from (milliseconds, byte-milliseconds), so sums carry no float error.
type exactMeters struct {
	enqueued, executions, completed, failed, dead, activeMs, storageByteMs, pushDeliveries, webhookDeliveries int64
	aiInput, aiOutput, aiCacheRead, aiCacheWrite, aiCostNanos                                                 int64
}

func (e *exactMeters) add(m wire.UsageMeters) {
	e.enqueued += m.JobsEnqueued
	e.executions += m.Executions
	e.completed += m.JobsCompleted
	e.failed += m.JobsFailed
	e.dead += m.JobsDead
	e.activeMs += int64(math.Round(m.ActiveJobSeconds * 1e3))
	e.storageByteMs += int64(math.Round(m.StorageByteHours * 3.6e6))
	e.pushDeliveries += m.PushDeliveries
	e.webhookDeliveries += m.WebhookDeliveries
	e.aiInput += m.AIInputTokens
	e.aiOutput += m.AIOutputTokens
	e.aiCacheRead += m.AICacheReadTokens
	e.aiCacheWrite += m.AICacheWriteTokens
	if m.AICostUSD != "" {
		n, _ := wire.ParseCostUSD(m.AICostUSD) // control wrote it from exact nano-dollars
		e.aiCostNanos += n
	}
}

func (e exactMeters) view() wire.UsageMeters {
	m := wire.UsageMeters{JobsEnqueued: e.enqueued, Executions: e.executions, JobsCompleted: e.completed,
		JobsFailed: e.failed, JobsDead: e.dead, ActiveJobSeconds: float64(e.activeMs) / 1e3,
		StorageByteHours: float64(e.storageByteMs) / 3.6e6, PushDeliveries: e.pushDeliveries, WebhookDeliveries: e.webhookDeliveries,
		AIInputTokens: e.aiInput, AIOutputTokens: e.aiOutput, AICacheReadTokens: e.aiCacheRead, AICacheWriteTokens: e.aiCacheWrite}
	if e.aiCostNanos != 0 {
		m.AICostUSD = wire.FormatCostUSD(e.aiCostNanos)
	}
	return m
}
