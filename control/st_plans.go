package control

import (
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
)

func planNotFound(name string) error { return apierr.New(apierr.NotFound, "plan %q not found", name) }

// loadPlanVersions is every version of plan name, oldest first (nil for
// an unknown plan); the free plan starts with its built-in version.
func loadPlanVersions(r pebble.Reader, name string) ([]planVersion, error) {
	var out []planVersion
	if name == FreePlan {
		out = append(out, builtinFree)
	}
	err := scanJSON(r, layout.PlanVersions(name), func(_ []byte, v planVersion) { out = append(out, v) })
	return out, err
}

// findPlan is plan name's latest version, or a 404.
func findPlan(r pebble.Reader, name string) (planVersion, error) {
	if !planNameRE.MatchString(name) {
		return planVersion{}, planNotFound(name)
	}
	vs, err := loadPlanVersions(r, name)
	if err == nil && len(vs) == 0 {
		err = planNotFound(name)
	}
	if err != nil {
		return planVersion{}, err
	}
	return vs[len(vs)-1], nil
}

// listPlans is every plan's latest version, by name.
func listPlans(r pebble.Reader) ([]planVersion, error) {
	latest := map[string]planVersion{FreePlan: builtinFree}
	err := scanJSON(r, layout.Plans(), func(_ []byte, v planVersion) { latest[v.Plan.Name] = v })
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(latest))
	for n := range latest {
		names[n] = true
	}
	out := make([]planVersion, 0, len(latest))
	for _, n := range sortedKeys(names) {
		out = append(out, latest[n])
	}
	return out, nil
}

// quotaExceeded refuses what a plan's count limit forbids.
func quotaExceeded(limit string, max int64, plan string) error {
	return apierr.New(apierr.QuotaExceeded, "the %s limit of %d of plan %q is reached", limit, max, plan)
}

// errPlanHistory wraps a broken plan history: a storage fault, not input.
func errPlanHistory(tid string, err error) error {
	return fmt.Errorf("control: plan history of %s: %w", tid, err)
}
