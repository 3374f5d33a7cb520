package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

// A schedule that leaves max_retries out sends none, so its jobs take the
// queue's default (not a fixed 3); setting it, then taking it out again,
// goes back to the queue's default, and a plan after either is empty.
func TestAccScheduleMaxRetriesFollowsTheQueue(t *testing.T) {
	ns := accNamespace(t, "schedretries")
	const addr = "jobbie_schedule.s"
	config := func(retries string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_schedule" "s" {
  name  = "nightly"
  queue = "reports"
  cron  = "0 3 * * *"
  %s
}
`, retries)
	}
	expect := func(retries int, byDefault bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			s, err := api().WithNamespace(ns).GetSchedule(ctx(t), "nightly")
			if err != nil {
				return err
			}
			if s.MaxRetries != retries || s.MaxRetriesDefault != byDefault {
				return fmt.Errorf("max_retries %d (default %v); want %d (default %v)", s.MaxRetries, s.MaxRetriesDefault, retries, byDefault)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { accPreCheck(t) },
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					six := 6
					if _, err := api().WithNamespace(ns).PutQueue(ctx(t), "reports", client.QueueSpec{
						Defaults: client.QueueDefaultsSpec{MaxRetries: &six}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(addr, "max_retries"),
					expect(6, true),
				),
			},
			{Config: config(""), PlanOnly: true},
			{
				Config: config("max_retries = 2"),
				Check:  resource.ComposeAggregateTestCheckFunc(resource.TestCheckResourceAttr(addr, "max_retries", "2"), expect(2, false)),
			},
			{
				Config: config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(resource.TestCheckNoResourceAttr(addr, "max_retries"), expect(6, true)),
			},
			{RefreshState: true},
		},
	})
}
