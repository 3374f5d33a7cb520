package state

import (
	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
)

func PlanNotFound(name string) error { return apierr.New(apierr.NotFound, "plan %q not found", name) }

// LoadPlanVersions is every version of plan name, oldest first (nil for
// an unknown plan); the free plan starts with its built-in version.
func LoadPlanVersions(r pebble.Reader, name string) ([]billing.PlanVersion, error) {
	var out []billing.PlanVersion
	if name == billing.FreePlan {
		out = append(out, billing.BuiltinFree)
	}
	err := scanJSON(r, layout.PlanVersions(name), func(_ []byte, v billing.PlanVersion) { out = append(out, v) })
	return out, err
}

// FindPlan is plan name's latest version, or a 404.
func FindPlan(r pebble.Reader, name string) (billing.PlanVersion, error) {
	if !billing.ValidPlanName(name) {
		return billing.PlanVersion{}, PlanNotFound(name)
	}
	vs, err := LoadPlanVersions(r, name)
	if err == nil && len(vs) == 0 {
		err = PlanNotFound(name)
	}
	if err != nil {
		return billing.PlanVersion{}, err
	}
	return vs[len(vs)-1], nil
}

// ListPlans is every plan's latest version, by name.
func ListPlans(r pebble.Reader) ([]billing.PlanVersion, error) {
	latest := map[string]billing.PlanVersion{billing.FreePlan: billing.BuiltinFree}
	err := scanJSON(r, layout.Plans(), func(_ []byte, v billing.PlanVersion) { latest[v.Plan.Name] = v })
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(latest))
	for n := range latest {
		names[n] = true
	}
	out := make([]billing.PlanVersion, 0, len(latest))
	for _, n := range billing.SortedKeys(names) {
		out = append(out, latest[n])
	}
	return out, nil
}

// QuotaExceeded refuses what a plan's count limit forbids.
func QuotaExceeded(limit string, max int64, plan string) error {
	return apierr.New(apierr.QuotaExceeded, "the %s limit of %d of plan %q is reached", limit, max, plan)
}
