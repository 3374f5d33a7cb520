package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

const policyNightly = `
resource "jobbie_backup_policy" "p" {
  cron      = "0 3 * * *"
  retention = 7
}
`

const policyChanged = `
resource "jobbie_backup_policy" "p" {
  cron      = "@daily"
  timezone  = "Europe/Paris"
  retention = 30
  enabled   = false
}
`

// apiPolicy checks the backup policy the API holds for ns.
func apiPolicy(t *testing.T, ns, cron, tz string, retention int, enabled bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		p, err := api().GetBackupPolicy(ctx(t), ns)
		if err != nil {
			return err
		}
		if p.Cron != cron || p.Timezone != tz || p.Retention != retention || p.Enabled != enabled {
			return fmt.Errorf("the API holds %+v", p)
		}
		return nil
	}
}

func TestAccBackupPolicy(t *testing.T) {
	ns := accNamespace(t, "bpol")
	const addr = "jobbie_backup_policy.p"
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := api().GetBackupPolicy(ctx(nil), ns); !client.IsNotFound(err) {
				return fmt.Errorf("backup policy of %s after destroy: %v", ns, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: providerBlock(ns) + policyNightly,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "timezone", "UTC"),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestCheckResourceAttrSet(addr, "next_run_at"),
					resource.TestCheckNoResourceAttr(addr, "last_run_at"),
					apiPolicy(t, ns, "0 3 * * *", "UTC", 7, true),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: ns, ImportStateVerify: true},
			{ // every setting changed in place
				Config:           providerBlock(ns) + policyChanged,
				ConfigPlanChecks: update,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "cron", "@daily"),
					resource.TestCheckResourceAttr(addr, "enabled", "false"),
					resource.TestCheckNoResourceAttr(addr, "next_run_at"),
					apiPolicy(t, ns, "@daily", "Europe/Paris", 30, false),
				),
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					on := true
					if _, err := api().PutBackupPolicy(ctx(t), ns, client.BackupPolicyRequest{Cron: "@hourly", Timezone: "Europe/Paris",
						Retention: 3, Enabled: &on}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             providerBlock(ns) + policyChanged,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and an apply puts it back
				Config:           providerBlock(ns) + policyChanged,
				ConfigPlanChecks: update,
				Check:            apiPolicy(t, ns, "@daily", "Europe/Paris", 30, false),
			},
			{RefreshState: true}, // read back, no drift
			{ // removed outside Terraform: set again
				PreConfig: func() {
					if err := api().DeleteBackupPolicy(ctx(t), ns); err != nil {
						t.Fatal(err)
					}
				},
				Config: providerBlock(ns) + policyChanged,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: apiPolicy(t, ns, "@daily", "Europe/Paris", 30, false),
			},
		},
	})
}

// A policy the namespace already has is imported by the namespace's name.
func TestAccBackupPolicyImportExisting(t *testing.T) {
	ns := accNamespace(t, "bpimp")
	if _, err := api().PutBackupPolicy(ctx(t), ns, client.BackupPolicyRequest{Cron: "30 2 * * 1", Timezone: "America/New_York",
		Retention: 12}); err != nil {
		t.Fatal(err)
	}
	config := providerBlock(ns) + `
resource "jobbie_backup_policy" "p" {
  cron      = "30 2 * * 1"
  timezone  = "America/New_York"
  retention = 12
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config:             config,
				ResourceName:       "jobbie_backup_policy.p",
				ImportState:        true,
				ImportStateId:      ns,
				ImportStatePersist: true,
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					if len(s) != 1 || s[0].Attributes["retention"] != "12" || s[0].Attributes["enabled"] != "true" ||
						s[0].Attributes["timezone"] != "America/New_York" {
						return fmt.Errorf("imported %+v", s)
					}
					return nil
				},
			},
			{ // the configuration matches what was imported
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

func TestAccBackupPolicyValidation(t *testing.T) {
	ns := accNamespace(t, "bpbad")
	bad := func(body, want string) resource.TestStep {
		return resource.TestStep{
			Config:      "resource \"jobbie_backup_policy\" \"bad\" {\n  " + body + "\n}\n",
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			bad(`cron = "61 * * * *"`+"\nretention = 1", `invalid cron expression`),
			bad(`cron = "TZ=UTC 0 3 * * *"`+"\nretention = 1", `set the time zone in the timezone attribute`),
			bad(`cron = "@daily"`+"\nretention = 1\ntimezone = \"Mars/Olympus\"", `unknown time zone`),
			bad(`cron = "@daily"`+"\nretention = 1\ntimezone = \"Local\"", `IANA time zone`),
			bad(`cron = "@daily"`+"\nretention = 0", `between 1 and 1000`),
			bad(`cron = "@daily"`+"\nretention = 1001", `between 1 and 1000`),
			bad(`retention = 3`, `"cron" is required`),
			{ // a value not known at plan time is checked when it is, before any request
				Config: providerBlock(ns) + `
resource "terraform_data" "cron" { input = "0 25 * * *" }
resource "jobbie_backup_policy" "bad" {
  cron      = terraform_data.cron.output
  retention = 2
}
`,
				ExpectError: regexp.MustCompile(`(?s)jobbie_backup_policy.bad.*invalid cron expression "0 25 \* \* \*"`),
			},
		},
	})
}
