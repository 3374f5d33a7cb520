package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Plan commands. Both take effect from the hour after the command's time
// (the leader's stamp), so every node computes the same hour.

// PutPlanCmd creates (Create) or replaces a plan, checked by the proposer.
type PutPlanCmd struct {
	Plan   wire.Plan `json:"plan"`
	Create bool      `json:"create,omitempty"`
}

// SetTenantPlanCmd moves a tenant to a plan from the next hour.
type SetTenantPlanCmd struct {
	TenantID string `json:"tenant_id"`
	Plan     string `json:"plan"`
}

func applyPutPlan(tx *replica.Tx, c *PutPlanCmd) (billing.PlanVersion, error) {
	p := c.Plan
	vs := must(LoadPlanVersions(tx, p.Name))
	switch {
	case c.Create && len(vs) > 0:
		return billing.PlanVersion{}, apierr.New(apierr.Conflict, "plan %q exists", p.Name)
	case !c.Create && len(vs) == 0:
		return billing.PlanVersion{}, PlanNotFound(p.Name)
	}
	p.Version = 1
	if len(vs) > 0 {
		last := vs[len(vs)-1].Plan
		// Invoices of a month are in one currency; a plan keeping its
		// currency is what lets them be.
		if last.Currency != p.Currency {
			return billing.PlanVersion{}, apierr.Field("currency", "plan %q is in %s; a plan's currency cannot change (create another plan)", p.Name, last.Currency)
		}
		p.Version = last.Version + 1
	}
	now := tx.Now.UTC()
	p.Updated = &now
	// A change applies from the next hour, so no hour is billed on two
	// versions; a new plan's first version applies at once (no tenant is
	// on it yet, so no hour changes meaning).
	from := billing.NextHour(now)
	if p.Version == 1 {
		from = now.Truncate(time.Hour)
	}
	v := billing.PlanVersion{Plan: p, From: from}
	mustSetJSON(tx, layout.PlanVersion(p.Name, p.Version), v)
	return v, nil
}

func applySetTenantPlan(tx *replica.Tx, c *SetTenantPlanCmd) (wire.TenantPlan, error) {
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return wire.TenantPlan{}, businessErr(err)
	}
	vs := must(LoadPlanVersions(tx, c.Plan))
	if len(vs) == 0 {
		return wire.TenantPlan{}, apierr.Field("plan", "plan %q does not exist", c.Plan)
	}
	latest := vs[len(vs)-1]
	from := billing.NextHour(tx.Now)
	b := must(LoadPlanBook(tx, c.TenantID))
	prev := must(b.At(from.Add(-time.Hour)))
	// Compared with the plan the tenant would stay on, not a pending
	// change this one replaces.
	if prevPlan := must(b.VersionOf(prev.Name, from)).Plan; billing.HasPrices(prevPlan) && billing.HasPrices(latest.Plan) && prevPlan.Currency != latest.Plan.Currency {
		return wire.TenantPlan{}, apierr.New(apierr.Conflict, "plan %q is in %s and the tenant's plan %q in %s: an invoice has one currency",
			c.Plan, latest.Plan.Currency, prevPlan.Name, prevPlan.Currency)
	}
	if prev.Name == c.Plan {
		// Back to the plan of the hour before: a pending change is undone
		// rather than a no-op entry splitting the invoice.
		mustDelete(tx, layout.TenantPlan(c.TenantID, from))
	} else {
		mustSetJSON(tx, layout.TenantPlan(c.TenantID, from), billing.PlanChange{Plan: c.Plan, Version: latest.Plan.Version, SetAt: tx.Now.UTC()})
	}
	return must(TenantPlanAt(tx, c.TenantID, tx.Now)), nil
}

// CheckCountQuota refuses one more of what limit counts (have of them
// now) when the tenant's plan in effect at now caps it at have or fewer.
func CheckCountQuota(r pebble.Reader, tid string, now time.Time, limit string, have int) error {
	b := must(LoadPlanBook(r, tid))
	cur := must(b.At(now.UTC().Truncate(time.Hour)))
	var max *int64
	switch limit {
	case "max_namespaces":
		max = cur.Version.Plan.Limits.MaxNamespaces
	case "max_keys":
		max = cur.Version.Plan.Limits.MaxKeys
	}
	if max != nil && int64(have) >= *max {
		return QuotaExceeded(limit, *max, cur.Name)
	}
	return nil
}

// TenantPlanAt is tenant tid's plan at now and the change due at the
// Next hour, if any (changes never take effect later than that).
func TenantPlanAt(r pebble.Reader, tid string, now time.Time) (wire.TenantPlan, error) {
	b, err := LoadPlanBook(r, tid)
	if err != nil {
		return wire.TenantPlan{}, err
	}
	h := now.UTC().Truncate(time.Hour)
	cur, err := b.At(h)
	if err != nil {
		return wire.TenantPlan{}, err
	}
	out := wire.TenantPlan{TenantID: tid, Plan: cur.Version.Plan, Since: cur.Since.UTC()}
	nxt, err := b.At(h.Add(time.Hour))
	if err != nil {
		return wire.TenantPlan{}, err
	}
	if nxt.Name != cur.Name || nxt.Version.Plan.Version != cur.Version.Plan.Version {
		from := h.Add(time.Hour)
		out.Next, out.NextFrom = &nxt.Version.Plan, &from
	}
	return out, nil
}

func decodeJSON(k, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("control: decode %q: %w", k, err)
	}
	return nil
}

// LoadPlanBook reads tenant tid's plan history and the versions of every
// plan it names (the free plan's too), for billing.Book.
func LoadPlanBook(r pebble.Reader, tid string) (*billing.Book, error) {
	t, err := LoadTenant(r, tid)
	if err != nil {
		return nil, err
	}
	b := &billing.Book{Tenant: tid, Created: t.CreatedAt, Versions: map[string][]billing.PlanVersion{}}
	err = scan(r, layout.TenantPlans(tid), func(k, v []byte) error {
		h, err := layout.TenantPlanHour(k)
		if err != nil {
			return err
		}
		e := billing.HistoryEntry{From: h}
		if err := decodeJSON(k, v, &e.PlanChange); err != nil {
			return err
		}
		b.History = append(b.History, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, name := range append([]string{billing.FreePlan}, historyPlans(b.History)...) {
		if _, ok := b.Versions[name]; ok {
			continue
		}
		if b.Versions[name], err = LoadPlanVersions(r, name); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func historyPlans(h []billing.HistoryEntry) []string {
	out := make([]string, len(h))
	for i, e := range h {
		out[i] = e.Plan
	}
	return out
}
