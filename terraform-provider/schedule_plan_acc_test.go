package provider_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// An update that cannot change a schedule's run history or next run plans
// them as they are, not as "(known after apply)"; one that can (a new cron,
// enabling, a run due before the apply) still plans them unknown, and
// every apply agrees with its plan.
func TestAccScheduleUpdatePlansRunsKnown(t *testing.T) {
	ns := accNamespace(t, "schedplan")
	const addr = "jobbie_schedule.s"
	config := func(cron string, enabled bool, priority string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_schedule" "s" {
  name     = "s"
  queue    = "reports"
  cron     = %q
  timezone = "UTC"
  enabled  = %t
  priority = %q
}
`, cron, enabled, priority)
	}
	// Twelve hours from now, so the run is never due during the test.
	far := fmt.Sprintf("0 %d * * *", (time.Now().UTC().Hour()+12)%24)
	known := func(attr string, v knownvalue.Check) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue(addr, tfjsonpath.New(attr), v)
	}
	unknown := func(attr string) plancheck.PlanCheck { return plancheck.ExpectUnknownValue(addr, tfjsonpath.New(attr)) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             scheduleGone(ns, "s"),
		Steps: []resource.TestStep{
			{ // fires every second until it has a run history
				Config: config("@every 1s", true, "normal"),
				Check: func(*terraform.State) error {
					deadline := time.Now().Add(30 * time.Second)
					for {
						list, err := api().WithNamespace(ns).ListSchedules(ctx(t))
						if err != nil {
							return err
						}
						if len(list) == 1 && list[0].LastRun != nil {
							return nil
						}
						if time.Now().After(deadline) {
							return fmt.Errorf("the schedule did not fire in 30s: %+v", list)
						}
						time.Sleep(100 * time.Millisecond)
					}
				},
			},
			{ // disabling: it may fire before the apply, and its next run goes
				Config: config("@every 1s", false, "normal"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					unknown("next_run"), unknown("last_run"), unknown("last_job_id"),
				}},
				Check: resource.TestCheckResourceAttrSet(addr, "last_job_id"),
			},
			{ // disabled, a new priority changes nothing else (its next run stays null)
				Config: config("@every 1s", false, "high"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					planned("next_run"), known("last_run", knownvalue.NotNull()), known("last_job_id", knownvalue.NotNull()),
				}},
			},
			{ // enabled on a new cron: the next run is the update's; the history stays
				Config: config(far, true, "high"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					unknown("next_run"), known("last_run", knownvalue.NotNull()), known("last_job_id", knownvalue.NotNull()),
				}},
				Check: resource.TestCheckResourceAttrSet(addr, "next_run"),
			},
			{ // its next run far off, a new priority changes none of them
				Config: config(far, true, "critical"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					known("next_run", knownvalue.NotNull()), known("last_run", knownvalue.NotNull()), known("last_job_id", knownvalue.NotNull()),
				}},
			},
		},
	})
}

// planned checks the plan of the resource's attr is known: a value or null,
// not "(known after apply)".
func planned(attr string) plancheck.PlanCheck { return plannedCheck{attr} }

type plannedCheck struct{ attr string }

func (c plannedCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != "jobbie_schedule.s" {
			continue
		}
		if u, ok := rc.Change.AfterUnknown.(map[string]any); ok && u[c.attr] == true {
			resp.Error = fmt.Errorf("%s is planned as (known after apply)", c.attr)
		}
		return
	}
	resp.Error = fmt.Errorf("no change of jobbie_schedule.s planned")
}
