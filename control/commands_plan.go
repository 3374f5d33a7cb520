package control

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Plan commands. Both take effect from the hour after the command's time
// (the leader's stamp), so every node computes the same hour.

// putPlanCmd creates (Create) or replaces a plan, checked by the proposer.
type putPlanCmd struct {
	Plan   wire.Plan `json:"plan"`
	Create bool      `json:"create,omitempty"`
}

// setTenantPlanCmd moves a tenant to a plan from the next hour.
type setTenantPlanCmd struct {
	TenantID string `json:"tenant_id"`
	Plan     string `json:"plan"`
}

// planChange is a stored entry of a tenant's plan history (JSON, an
// on-disk format): the plan, its latest version when the change was made
// (the invoice prices each hour by the version in effect then) and when.
type planChange struct {
	Plan    string    `json:"plan"`
	Version uint64    `json:"version"`
	SetAt   time.Time `json:"set_at"`
}

func applyPutPlan(tx *replica.Tx, c *putPlanCmd) (planVersion, error) {
	p := c.Plan
	vs := must(loadPlanVersions(tx, p.Name))
	switch {
	case c.Create && len(vs) > 0:
		return planVersion{}, apierr.New(apierr.Conflict, "plan %q exists", p.Name)
	case !c.Create && len(vs) == 0:
		return planVersion{}, planNotFound(p.Name)
	}
	p.Version = 1
	if len(vs) > 0 {
		last := vs[len(vs)-1].Plan
		// Invoices of a month are in one currency; a plan keeping its
		// currency is what lets them be.
		if last.Currency != p.Currency {
			return planVersion{}, apierr.Field("currency", "plan %q is in %s; a plan's currency cannot change (create another plan)", p.Name, last.Currency)
		}
		p.Version = last.Version + 1
	}
	now := tx.Now.UTC()
	p.Updated = &now
	// A change applies from the next hour, so no hour is billed on two
	// versions; a new plan's first version applies at once (no tenant is
	// on it yet, so no hour changes meaning).
	from := nextHour(now)
	if p.Version == 1 {
		from = now.Truncate(time.Hour)
	}
	v := planVersion{Plan: p, From: from}
	mustSetJSON(tx, layout.PlanVersion(p.Name, p.Version), v)
	return v, nil
}

func applySetTenantPlan(tx *replica.Tx, c *setTenantPlanCmd) (wire.TenantPlan, error) {
	if _, err := loadTenant(tx, c.TenantID); err != nil {
		return wire.TenantPlan{}, businessErr(err)
	}
	vs := must(loadPlanVersions(tx, c.Plan))
	if len(vs) == 0 {
		return wire.TenantPlan{}, apierr.Field("plan", "plan %q does not exist", c.Plan)
	}
	latest := vs[len(vs)-1]
	from := nextHour(tx.Now)
	b := must(newPlanBook(tx, c.TenantID))
	prev := must(b.at(from.Add(-time.Hour)))
	// Compared with the plan the tenant would stay on, not a pending
	// change this one replaces.
	if prevPlan := must(b.versionOf(prev.name, from)).Plan; hasPrices(prevPlan) && hasPrices(latest.Plan) && prevPlan.Currency != latest.Plan.Currency {
		return wire.TenantPlan{}, apierr.New(apierr.Conflict, "plan %q is in %s and the tenant's plan %q in %s: an invoice has one currency",
			c.Plan, latest.Plan.Currency, prevPlan.Name, prevPlan.Currency)
	}
	if prev.name == c.Plan {
		// Back to the plan of the hour before: a pending change is undone
		// rather than a no-op entry splitting the invoice.
		mustDelete(tx, layout.TenantPlan(c.TenantID, from))
	} else {
		mustSetJSON(tx, layout.TenantPlan(c.TenantID, from), planChange{Plan: c.Plan, Version: latest.Plan.Version, SetAt: tx.Now.UTC()})
	}
	return must(tenantPlanAt(tx, c.TenantID, tx.Now)), nil
}

// checkCountQuota refuses one more of what limit counts (have of them
// now) when the tenant's plan in effect at now caps it at have or fewer.
func checkCountQuota(r pebble.Reader, tid string, now time.Time, limit string, have int) error {
	b := must(newPlanBook(r, tid))
	cur := must(b.at(now.UTC().Truncate(time.Hour)))
	var max *int64
	switch limit {
	case "max_namespaces":
		max = cur.version.Plan.Limits.MaxNamespaces
	case "max_keys":
		max = cur.version.Plan.Limits.MaxKeys
	}
	if max != nil && int64(have) >= *max {
		return quotaExceeded(limit, *max, cur.name)
	}
	return nil
}

// planBook resolves which plan version a tenant is on in any hour, from
// its plan history and the versions of the plans it names (loaded once).
type planBook struct {
	r        pebble.Reader
	tid      string
	created  time.Time
	history  []historyEntry // oldest first
	versions map[string][]planVersion
}

type historyEntry struct {
	From time.Time
	planChange
}

// onPlan is the plan a tenant is on in one hour: its name, since when
// (the change that put it there, or the tenant's creation) and the
// version in effect.
type onPlan struct {
	name    string
	since   time.Time
	version planVersion
}

func newPlanBook(r pebble.Reader, tid string) (*planBook, error) {
	t, err := loadTenant(r, tid)
	if err != nil {
		return nil, err
	}
	b := &planBook{r: r, tid: tid, created: t.CreatedAt, versions: map[string][]planVersion{}}
	err = scan(r, layout.TenantPlans(tid), func(k, v []byte) error {
		h, err := layout.TenantPlanHour(k)
		if err != nil {
			return err
		}
		e := historyEntry{From: h}
		if err := decodeJSON(k, v, &e.planChange); err != nil {
			return err
		}
		b.history = append(b.history, e)
		return nil
	})
	return b, err
}

// at is the plan of the hour starting at h.
func (b *planBook) at(h time.Time) (onPlan, error) {
	cur := onPlan{name: FreePlan, since: b.created}
	for _, e := range b.history {
		if e.From.After(h) {
			break
		}
		cur.name, cur.since = e.Plan, e.From
	}
	if cur.since.Before(b.created) {
		cur.since = b.created // on its plan since its creation, in its first hour
	}
	v, err := b.versionOf(cur.name, h)
	if err != nil {
		return onPlan{}, err
	}
	cur.version = v
	return cur, nil
}

// versionOf is the version of plan name in effect in the hour at h.
func (b *planBook) versionOf(name string, h time.Time) (planVersion, error) {
	vs, ok := b.versions[name]
	if !ok {
		var err error
		if vs, err = loadPlanVersions(b.r, name); err != nil {
			return planVersion{}, err
		}
		b.versions[name] = vs
	}
	v, ok := versionAt(vs, h)
	if !ok {
		return planVersion{}, errPlanHistory(b.tid, apierr.New(apierr.Internal, "plan %q has no version in effect at %s", name, h.Format(time.RFC3339)))
	}
	return v, nil
}

// tenantPlanAt is tenant tid's plan at now and the change due at the
// next hour, if any (changes never take effect later than that).
func tenantPlanAt(r pebble.Reader, tid string, now time.Time) (wire.TenantPlan, error) {
	b, err := newPlanBook(r, tid)
	if err != nil {
		return wire.TenantPlan{}, err
	}
	h := now.UTC().Truncate(time.Hour)
	cur, err := b.at(h)
	if err != nil {
		return wire.TenantPlan{}, err
	}
	out := wire.TenantPlan{TenantID: tid, Plan: cur.version.Plan, Since: cur.since.UTC()}
	nxt, err := b.at(h.Add(time.Hour))
	if err != nil {
		return wire.TenantPlan{}, err
	}
	if nxt.name != cur.name || nxt.version.Plan.Version != cur.version.Plan.Version {
		from := h.Add(time.Hour)
		out.Next, out.NextFrom = &nxt.version.Plan, &from
	}
	return out, nil
}

func decodeJSON(k, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("control: decode %q: %w", k, err)
	}
	return nil
}
