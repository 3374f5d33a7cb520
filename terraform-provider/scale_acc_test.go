package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// Fifty resources in one apply, at Terraform's default parallelism (10),
// then a plan that finds nothing to do, then one destroy.
func TestAccFiftySchedules(t *testing.T) {
	ns := accNamespace(t, "fifty")
	config := providerBlock(ns) + `
resource "jobbie_schedule" "many" {
  count    = 50
  name     = "report-${count.index}"
  queue    = "reports.q${count.index % 5}"
  cron     = "${count.index} 2 * * *"
  timezone = "America/New_York"
  payload  = jsonencode({ n = count.index })
}
`
	countIs := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			list, err := api().WithNamespace(ns).ListSchedules(ctx(t))
			if err != nil {
				return err
			}
			if len(list) != want {
				return fmt.Errorf("namespace %s holds %d schedules, want %d", ns, len(list), want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             countIs(0),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					countIs(50),
					resource.TestCheckResourceAttr("jobbie_schedule.many.49", "name", "report-49"),
					resource.TestCheckResourceAttr("jobbie_schedule.many.49", "cron", "49 2 * * *"),
				),
			},
			{RefreshState: true},
		},
	})
}

func TestAccFiftyQueues(t *testing.T) {
	ns := accNamespace(t, "fiftyq")
	config := providerBlock(ns) + `
resource "jobbie_queue" "many" {
  count       = 50
  name        = format("tenants.t%02d", count.index)
  concurrency = 2
  throttle    = { rate = 50, period = "60s" }
  defaults    = { max_retries = 4, lease_duration = "30s" }
}
`
	countIs := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			list, err := api().WithNamespace(ns).ListQueues(ctx(t))
			if err != nil {
				return err
			}
			if len(list) != want {
				return fmt.Errorf("namespace %s holds %d queues, want %d", ns, len(list), want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             countIs(0),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					countIs(50),
					resource.TestCheckResourceAttr("jobbie_queue.many.49", "name", "tenants.t49"),
					resource.TestCheckResourceAttr("jobbie_queue.many.49", "throttle.period", "60s"),
				),
			},
			{RefreshState: true},
		},
	})
}
