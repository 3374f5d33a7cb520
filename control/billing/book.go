package billing

import (
	"fmt"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
)

// PlanChange is a stored entry of a tenant's plan history (JSON, an
// on-disk format): the plan, its latest version when the change was made
// (the invoice prices each hour by the version in effect then) and when.
type PlanChange struct {
	Plan    string    `json:"plan"`
	Version uint64    `json:"version"`
	SetAt   time.Time `json:"set_at"`
}

// HistoryEntry is a plan change and the hour it applies from.
type HistoryEntry struct {
	From time.Time
	PlanChange
}

// Book resolves which plan version a tenant is on in any hour, from its
// plan history and the versions of the plans it names. The caller reads
// them (state.LoadPlanBook): the free plan's versions and those of every
// plan the history names.
type Book struct {
	Tenant   string
	Created  time.Time
	History  []HistoryEntry           // oldest first
	Versions map[string][]PlanVersion // by plan name, oldest first
}

// OnPlan is the plan a tenant is on in one hour: its name, since when
// (the change that put it there, or the tenant's creation) and the
// version in effect.
type OnPlan struct {
	Name    string
	Since   time.Time
	Version PlanVersion
}

// At is the plan of the hour starting at h.
func (b *Book) At(h time.Time) (OnPlan, error) {
	cur := OnPlan{Name: FreePlan, Since: b.Created}
	for _, e := range b.History {
		if e.From.After(h) {
			break
		}
		cur.Name, cur.Since = e.Plan, e.From
	}
	if cur.Since.Before(b.Created) {
		cur.Since = b.Created // on its plan since its creation, in its first hour
	}
	v, err := b.VersionOf(cur.Name, h)
	if err != nil {
		return OnPlan{}, err
	}
	cur.Version = v
	return cur, nil
}

// VersionOf is the version of plan name in effect in the hour at h.
func (b *Book) VersionOf(name string, h time.Time) (PlanVersion, error) {
	v, ok := VersionAt(b.Versions[name], h)
	if !ok {
		return PlanVersion{}, ErrPlanHistory(b.Tenant, apierr.New(apierr.Internal, "plan %q has no version in effect at %s", name, h.Format(time.RFC3339)))
	}
	return v, nil
}

// ErrPlanHistory wraps a broken plan history: a storage fault, not input.
func ErrPlanHistory(tid string, err error) error {
	return fmt.Errorf("control: plan history of %s: %w", tid, err)
}
