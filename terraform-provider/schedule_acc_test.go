package provider_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

func scheduleConfig(ns, cron string, enabled bool) string {
	return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_schedule" "nightly" {
  name        = "nightly"
  queue       = "emails.send"
  cron        = %q
  timezone    = "Europe/Paris"
  payload     = jsonencode({ kind = "digest", to = ["a", "b"] })
  priority    = "high"
  unique_key  = "nightly-digest"
  max_retries = 5
  enabled     = %t
}
`, cron, enabled)
}

func TestAccSchedule(t *testing.T) {
	ns := accNamespace(t, "sched")
	const addr = "jobbie_schedule.nightly"
	var firstID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             scheduleGone(ns, "nightly"),
		Steps: []resource.TestStep{
			{
				Config: scheduleConfig(ns, "0 3 * * *", true),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr(addr, "id", regexp.MustCompile(`^sch_`)),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "cron", "0 3 * * *"),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestCheckResourceAttrSet(addr, "next_run"),
					resource.TestCheckNoResourceAttr(addr, "last_run"),
					resource.TestCheckResourceAttrWith(addr, "id", func(id string) error { firstID = id; return nil }),
					func(*terraform.State) error {
						s, err := api().WithNamespace(ns).GetSchedule(ctx(t), firstID)
						if err != nil {
							return err
						}
						if s.Timezone != "Europe/Paris" || s.MaxRetries != 5 || s.Priority != "high" {
							return fmt.Errorf("the API holds %+v", s)
						}
						return nil
					},
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     ns + "/nightly",
				ImportStateVerify: true,
			},
			{ // update in place
				Config: scheduleConfig(ns, "@every 90s", false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPtr(addr, "id", &firstID),
					resource.TestCheckResourceAttr(addr, "cron", "@every 90s"),
					resource.TestCheckResourceAttr(addr, "enabled", "false"),
					resource.TestCheckNoResourceAttr(addr, "next_run"),
				),
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					c := api().WithNamespace(ns)
					_, err := c.UpdateSchedule(ctx(t), firstID, client.ScheduleRequest{Name: "nightly", Queue: "emails.other",
						Cron: "0 4 * * *", Payload: json.RawMessage(`{"kind":"other"}`)})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:             scheduleConfig(ns, "@every 90s", false),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and an apply puts it back, in place
				Config: scheduleConfig(ns, "@every 90s", false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "queue", "emails.send"),
					resource.TestCheckResourceAttr(addr, "cron", "@every 90s"),
				),
			},
			{ // deleted outside Terraform: planned for creation again
				PreConfig: func() {
					if err := api().WithNamespace(ns).DeleteSchedule(ctx(t), firstID); err != nil {
						t.Fatal(err)
					}
				},
				Config: scheduleConfig(ns, "@every 90s", false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.TestCheckResourceAttrWith(addr, "id", func(id string) error {
					if id == firstID {
						return fmt.Errorf("still the deleted schedule's id %s", id)
					}
					return nil
				}),
			},
		},
	})
}

// A payload written differently, and an omitted one, never show a diff.
func TestAccScheduleDefaultsAndPayloadFormatting(t *testing.T) {
	ns := accNamespace(t, "schedfmt")
	const addr = "jobbie_schedule.s"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: providerBlock(ns) + `
resource "jobbie_schedule" "s" {
  name    = "hourly report"
  queue   = "reports"
  cron    = "@hourly"
  payload = "{ \"b\" : 2,\n \"a\": [1, 2] }"
}
resource "jobbie_schedule" "bare" {
  name  = "bare"
  queue = "reports"
  cron  = "*/5 * * * *"
}
resource "jobbie_schedule" "null" {
  name    = "null payload"
  queue   = "reports"
  cron    = "@weekly"
  payload = jsonencode(null)
}
`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "timezone", "UTC"),
					resource.TestCheckResourceAttr(addr, "priority", "normal"),
					resource.TestCheckNoResourceAttr(addr, "max_retries"),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestCheckNoResourceAttr("jobbie_schedule.bare", "payload"),
					resource.TestCheckNoResourceAttr("jobbie_schedule.bare", "unique_key"),
				),
			},
			{ // the same configuration again plans nothing (after a refresh)
				RefreshState: true,
			},
		},
	})
}

// Bad input is refused at plan time, before any call to the API.
func TestAccScheduleValidation(t *testing.T) {
	accPreCheck(t)
	bad := func(attr, value, want string) resource.TestStep {
		attrs := map[string]string{"name": `"bad"`, "queue": `"q"`, "cron": `"* * * * *"`}
		attrs[attr] = value
		body := ""
		for _, k := range []string{"name", "queue", "cron", attr} {
			if attrs[k] != "" {
				body += fmt.Sprintf("  %s = %s\n", k, attrs[k])
				delete(attrs, k)
			}
		}
		return resource.TestStep{
			Config:      providerBlock("default") + "resource \"jobbie_schedule\" \"bad\" {\n" + body + "}\n",
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			bad("cron", `"61 * * * *"`, `invalid cron expression`),
			bad("cron", `"@every 500ms"`, `@every takes a whole number of seconds`),
			bad("timezone", `"Mars/Olympus"`, `unknown time zone "Mars/Olympus"`),
			bad("queue", `"no spaces allowed"`, `Invalid queue name`),
			bad("namespace", `"Not_A_Namespace"`, `Invalid namespace name`),
			bad("payload", `"{not json"`, `(?i)invalid JSON`),
			bad("priority", `"urgent"`, `value must be one of`),
			bad("max_retries", `1001`, `between 0 and 1000`),
		},
	})
}

// scheduleGone checks the schedule called name is gone from ns.
func scheduleGone(ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		list, err := api().WithNamespace(ns).ListSchedules(ctx(nil))
		if err != nil {
			return err
		}
		for _, s := range list {
			if s.Name == name {
				return fmt.Errorf("schedule %s/%s still exists after destroy", ns, name)
			}
		}
		return nil
	}
}

// Two queues may each have a schedule of one name: <namespace>/<name>
// then names both and is refused as ambiguous, and
// <namespace>/<queue>/<name> imports the one in that queue.
func TestAccScheduleImportByQueue(t *testing.T) {
	ns := accNamespace(t, "schedq")
	const addr = "jobbie_schedule.nightly"
	var id, otherID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := api().WithNamespace(ns).GetSchedule(ctx(t), id); !client.IsNotFound(err) {
				return fmt.Errorf("schedule %s after destroy: %v", id, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: scheduleConfig(ns, "0 3 * * *", true),
				Check:  resource.TestCheckResourceAttrWith(addr, "id", func(v string) error { id = v; return nil }),
			},
			{
				PreConfig: func() {
					s, err := api().WithNamespace(ns).CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly", Queue: "emails.other", Cron: "@daily"})
					if err != nil {
						t.Fatal(err)
					}
					otherID = s.ID
				},
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: ns + "/nightly",
				ExpectError:   regexp.MustCompile(`(?s)Schedule name in several queues.*emails\.other,\s+emails\.send`),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     ns + "/emails.send/nightly",
				ImportStateVerify: true,
			},
			{
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: ns + "/emails.none/nightly",
				ExpectError:   regexp.MustCompile(`Schedule not found`),
			},
			{ // the other queue's schedule is not Terraform's: removed here so the namespace can go
				PreConfig: func() {
					if err := api().WithNamespace(ns).DeleteSchedule(ctx(t), otherID); err != nil {
						t.Fatal(err)
					}
				},
				Config: scheduleConfig(ns, "0 3 * * *", true),
			},
		},
	})
}
