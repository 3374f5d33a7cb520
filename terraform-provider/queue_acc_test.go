package provider_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

const queueFull = `
resource "jobbie_queue" "send" {
  name        = "emails.send"
  description = "outgoing mail"
  concurrency = 5
  throttle    = { rate = 100, period = "1m" }
  defaults = {
    max_retries    = 7
    retry_backoff  = "exponential"
    lease_duration = "2m"
    retention      = "168h"
  }
}
`

const queueChanged = `
resource "jobbie_queue" "send" {
  name     = "emails.send"
  paused   = true
  throttle = { rate = 10, period = "1s" }
  defaults = {
    retry_backoff    = "linear"
    retry_base_delay = "5s"
    expire_after     = "1h"
  }
}
`

func TestAccQueue(t *testing.T) {
	ns := accNamespace(t, "queue")
	const addr = "jobbie_queue.send"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             queueGone(ns, "emails.send"),
		Steps: []resource.TestStep{
			{
				Config: providerBlock(ns) + queueFull,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns+"/emails.send"),
					resource.TestCheckResourceAttr(addr, "paused", "false"),
					resource.TestCheckResourceAttr(addr, "concurrency", "5"),
					resource.TestCheckResourceAttr(addr, "throttle.period", "1m"),
					resource.TestCheckResourceAttr(addr, "defaults.max_retries", "7"),
					resource.TestCheckNoResourceAttr(addr, "defaults.expire_after"),
					func(*terraform.State) error {
						q, err := api().WithNamespace(ns).GetQueue(ctx(t), "emails.send")
						if err != nil {
							return err
						}
						if q.Description != "outgoing mail" || q.Concurrency == nil || *q.Concurrency != 5 || q.Throttle == nil || q.Throttle.Rate != 100 {
							return fmt.Errorf("the API holds %+v", q)
						}
						return nil
					},
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     ns + "/emails.send",
				ImportStateVerify: true,
			},
			{ // update in place, fields removed included
				Config: providerBlock(ns) + queueChanged,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "paused", "true"),
					resource.TestCheckResourceAttr(addr, "description", ""),
					resource.TestCheckNoResourceAttr(addr, "concurrency"),
					resource.TestCheckNoResourceAttr(addr, "defaults.max_retries"),
					resource.TestCheckResourceAttr(addr, "defaults.expire_after", "1h"),
					func(*terraform.State) error {
						q, err := api().WithNamespace(ns).GetQueue(ctx(t), "emails.send")
						if err != nil {
							return err
						}
						if !q.Paused || q.Concurrency != nil || q.Defaults.MaxRetries != nil {
							return fmt.Errorf("the API holds %+v", q)
						}
						return nil
					},
				),
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					c := api().WithNamespace(ns)
					if _, err := c.ResumeQueue(ctx(t), "emails.send"); err != nil {
						t.Fatal(err)
					}
					if _, err := c.SetQueueConcurrency(ctx(t), "emails.send", 3); err != nil {
						t.Fatal(err)
					}
				},
				Config:             providerBlock(ns) + queueChanged,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and an apply puts it back
				Config: providerBlock(ns) + queueChanged,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "paused", "true"),
					resource.TestCheckNoResourceAttr(addr, "concurrency"),
				),
			},
			{ // deleted outside Terraform: created again
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).DeleteQueue(ctx(t), "emails.send"); err != nil {
						t.Fatal(err)
					}
				},
				Config: providerBlock(ns) + queueChanged,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.TestCheckResourceAttr(addr, "paused", "true"),
			},
		},
	})
}

// "60s" and "1m" are the same duration: neither the API's spelling nor a
// respelled configuration ever shows as a change.
func TestAccQueueDurationsNormalised(t *testing.T) {
	ns := accNamespace(t, "qdur")
	const addr = "jobbie_queue.q"
	config := func(period, lease, retention string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_queue" "q" {
  name     = "durations"
  throttle = { rate = 1, period = %q }
  defaults = { lease_duration = %q, retention = %q, retry_max_delay = "90000ms" }
}
`, period, lease, retention)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: config("60s", "90s", "1440m"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "throttle.period", "60s"), // as written, though the API says 1m
					resource.TestCheckResourceAttr(addr, "defaults.lease_duration", "90s"),
					func(*terraform.State) error {
						q, err := api().WithNamespace(ns).GetQueue(ctx(t), "durations")
						if err != nil {
							return err
						}
						if q.Throttle.Period != "1m" || string(q.Defaults.LeaseDuration) != `"1m30s"` {
							return fmt.Errorf("the API holds %+v", q)
						}
						return nil
					},
				),
			},
			{RefreshState: true}, // the API's spelling is no drift
			{ // respelled, no change
				Config: config("1m", "1m30s", "24h"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{ // a different duration is a change
				Config: config("2m", "1m30s", "24h"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.TestCheckResourceAttr(addr, "throttle.period", "2m"),
			},
		},
	})
}

func TestAccQueueValidation(t *testing.T) {
	accPreCheck(t)
	bad := func(body, want string) resource.TestStep {
		return resource.TestStep{
			Config:      "resource \"jobbie_queue\" \"bad\" {\n  name = \"q\"\n  " + body + "\n}\n",
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			bad(`concurrency = 0`, `between 1 and 1000000`),
			bad(`throttle = { rate = 5, period = "8d" }`, `"8d" is not a duration`),
			bad(`throttle = { rate = 5, period = "200h" }`, `longer than 168h`),
			bad(`defaults = { lease_duration = "500ms" }`, `shorter than 1s`),
			bad(`defaults = { retry_backoff = "random" }`, `value must be one of`),
			bad(`defaults = { retention = "10s" }`, `shorter than 1m`),
		},
	})
}

func TestAccQueueDataSources(t *testing.T) {
	ns := accNamespace(t, "qds")
	c := api().WithNamespace(ns)
	five, two := int64(5), int64(2)
	if _, err := c.PutQueue(ctx(t), "billing.charge", client.QueueSpec{Description: "charges", Concurrency: &five, KeyConcurrency: &two,
		Defaults: client.QueueDefaultsSpec{LeaseDuration: 2 * time.Minute}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "billing.charge"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "billing.refund"}); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: providerBlock(ns) + `
data "jobbie_queue" "charge" { name = "billing.charge" }
data "jobbie_queue" "refund" { name = "billing.refund" }
data "jobbie_queues" "all" {}
`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.jobbie_queue.charge", "namespace", ns),
					resource.TestCheckResourceAttr("data.jobbie_queue.charge", "description", "charges"),
					resource.TestCheckResourceAttr("data.jobbie_queue.charge", "concurrency", "5"),
					resource.TestCheckResourceAttr("data.jobbie_queue.charge", "key_concurrency.max", "2"),
					resource.TestCheckResourceAttr("data.jobbie_queue.charge", "defaults.lease_duration", "2m"),
					resource.TestCheckResourceAttr("data.jobbie_queue.charge", "counts.pending", "1"),
					resource.TestCheckResourceAttr("data.jobbie_queues.all", "names.#", "2"),
					resource.TestCheckTypeSetElemAttr("data.jobbie_queues.all", "names.*", "billing.refund"),
					resource.TestCheckTypeSetElemNestedAttrs("data.jobbie_queues.all", "queues.*",
						map[string]string{"name": "billing.refund", "counts.pending": "1", "paused": "false"}),
					resource.TestCheckNoResourceAttr("data.jobbie_queue.refund", "key_concurrency"),
				),
			},
		},
	})
}

// queueGone checks the queue is gone from ns.
func queueGone(ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := api().WithNamespace(ns).GetQueue(ctx(nil), name)
		if !client.IsNotFound(err) {
			return fmt.Errorf("queue %s/%s after destroy: %v", ns, name, err)
		}
		return nil
	}
}

// A queue holding jobs is not deleted with them unless force_destroy says
// so: neither by a destroy nor by a rename, which replaces it.
func TestAccQueueForceDestroy(t *testing.T) {
	ns := accNamespace(t, "qforce")
	config := func(name string, force bool) string { // force_destroy left out is false
		set := ""
		if force {
			set = "  force_destroy = true\n"
		}
		return providerBlock(ns) + fmt.Sprintf("resource \"jobbie_queue\" \"q\" {\n  name = %q\n%s}\n", name, set)
	}
	pending := func(name string) int64 {
		q, err := api().WithNamespace(ns).GetQueue(ctx(t), name)
		if err != nil {
			t.Fatalf("queue %s: %v", name, err)
		}
		return q.Counts.Pending
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             queueGone(ns, "orders"),
		Steps: []resource.TestStep{
			{
				Config: config("orders", false),
				Check: func(*terraform.State) error {
					_, err := api().WithNamespace(ns).Enqueue(ctx(t), client.EnqueueRequest{Queue: "orders"})
					return err
				},
			},
			{ // a rename would replace it: refused, the job kept
				Config:      config("orders-v2", false),
				ExpectError: regexp.MustCompile(`(?s)Queue ` + ns + `/orders holds jobs.*1 pending.*force_destroy = true`),
			},
			{ // and so is a destroy
				Config:      config("orders", false),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Queue ` + ns + `/orders holds jobs`),
			},
			{
				Config: config("orders", false),
				Check: func(*terraform.State) error {
					if n := pending("orders"); n != 1 {
						return fmt.Errorf("%d pending jobs after the refused deletes, want 1", n)
					}
					return nil
				},
			},
			{Config: config("orders", true)}, // the destroy at the end deletes it, job and all
		},
	})
}

// paused left out is not managed: a pause made during an incident, outside
// Terraform, survives the next plan and apply; set, it is held.
func TestAccQueuePausedUnmanaged(t *testing.T) {
	ns := accNamespace(t, "qpause")
	const addr = "jobbie_queue.q"
	unmanaged := providerBlock(ns) + "resource \"jobbie_queue\" \"q\" {\n  name = \"incident\"\n  concurrency = 2\n}\n"
	changed := providerBlock(ns) + "resource \"jobbie_queue\" \"q\" {\n  name = \"incident\"\n  concurrency = 3\n}\n"
	managed := providerBlock(ns) + "resource \"jobbie_queue\" \"q\" {\n  name = \"incident\"\n  concurrency = 3\n  paused = false\n}\n"
	isPaused := func(want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			q, err := api().WithNamespace(ns).GetQueue(ctx(t), "incident")
			if err != nil {
				return err
			}
			if q.Paused != want {
				return fmt.Errorf("paused is %v, want %v", q.Paused, want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: unmanaged,
				Check:  resource.ComposeAggregateTestCheckFunc(resource.TestCheckResourceAttr(addr, "paused", "false"), isPaused(false)),
			},
			{ // paused during an incident: no drift to undo
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).PauseQueue(ctx(t), "incident"); err != nil {
						t.Fatal(err)
					}
				},
				Config: unmanaged,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: isPaused(true),
			},
			{ // another change is applied, and the pause stays
				Config: changed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(resource.TestCheckResourceAttr(addr, "paused", "true"), isPaused(true)),
			},
			{ // declared, it is managed
				Config: managed,
				Check:  resource.ComposeAggregateTestCheckFunc(resource.TestCheckResourceAttr(addr, "paused", "false"), isPaused(false)),
			},
		},
	})
}
