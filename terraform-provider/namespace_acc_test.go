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

// namespaceConfig declares the namespace; an empty retention is left out.
func namespaceConfig(name, desc, retention string, protect, force bool) string {
	r := ""
	if retention != "" {
		r = fmt.Sprintf("retention = %q", retention)
	}
	return fmt.Sprintf(`
resource "jobbie_namespace" "ns" {
  name                = %q
  description         = %q
  %s
  deletion_protection = %t
  force_destroy       = %t
}
`, name, desc, r, protect, force)
}

func TestAccNamespace(t *testing.T) {
	accPreCheck(t)
	name := fmt.Sprintf("tfns-%d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	const addr = "jobbie_namespace.ns"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := api().GetNamespace(ctx(nil), name); !client.IsNotFound(err) {
				return fmt.Errorf("namespace %s after destroy: %v", name, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: namespaceConfig(name, "mail", "168h", false, false),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", name),
					resource.TestCheckResourceAttr(addr, "retention", "168h"),
					resource.TestCheckResourceAttr(addr, "deletion_protection", "false"),
					resource.TestCheckResourceAttrSet(addr, "created_at"),
				),
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateId:           name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"force_destroy"},
			},
			{ // update in place; a respelled retention is no change of its own
				Config: namespaceConfig(name, "all outgoing mail", "10080m", true, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "description", "all outgoing mail"),
					resource.TestCheckResourceAttr(addr, "retention", "168h"),
					resource.TestCheckResourceAttr(addr, "deletion_protection", "true"),
				),
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					d, r := "edited by hand", 48*time.Hour
					if _, err := api().UpdateNamespace(ctx(t), name, client.UpdateNamespaceRequest{Description: &d, Retention: &r}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             namespaceConfig(name, "all outgoing mail", "168h", true, false),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: namespaceConfig(name, "all outgoing mail", "168h", true, false),
				Check:  resource.TestCheckResourceAttr(addr, "description", "all outgoing mail"),
			},
			{ // deletion protection refuses destroy
				Config:      namespaceConfig(name, "all outgoing mail", "168h", true, false),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)protected from deletion.*deletion_protection\s*=\s*false`),
			},
			{
				Config: namespaceConfig(name, "all outgoing mail", "", false, false),
				Check:  resource.TestCheckNoResourceAttr(addr, "retention"),
			},
			{ // deleted outside Terraform: created again
				PreConfig: func() {
					if err := api().DeleteNamespace(ctx(t), name, false); err != nil {
						t.Fatal(err)
					}
				},
				Config: namespaceConfig(name, "all outgoing mail", "", false, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
			},
			{ // a namespace holding jobs is not destroyed without force_destroy
				PreConfig: func() {
					if _, err := api().WithNamespace(name).Enqueue(ctx(t), client.EnqueueRequest{Queue: "q"}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      namespaceConfig(name, "all outgoing mail", "", false, false),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)is not empty.*force_destroy\s*=\s*true`),
			},
			{ // with it, it is (the final destroy)
				Config: namespaceConfig(name, "all outgoing mail", "", false, true),
				Check:  resource.TestCheckResourceAttr(addr, "force_destroy", "true"),
			},
		},
	})
}

// Resources in a namespace the configuration creates: Terraform orders
// them, and the destroy needs no force_destroy.
func TestAccNamespaceWithContents(t *testing.T) {
	accPreCheck(t)
	name := fmt.Sprintf("tfnsc-%d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "jobbie_namespace" "billing" {
  name = %q
}
resource "jobbie_queue" "charge" {
  namespace   = jobbie_namespace.billing.name
  name        = "billing.charge"
  concurrency = 1
}
resource "jobbie_schedule" "invoices" {
  namespace = jobbie_namespace.billing.name
  name      = "monthly invoices"
  queue     = jobbie_queue.charge.name
  cron      = "0 0 1 * *"
}
data "jobbie_namespace" "billing" {
  name       = jobbie_namespace.billing.name
  depends_on = [jobbie_namespace.billing]
}
`, name),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("jobbie_queue.charge", "id", name+"/billing.charge"),
				resource.TestCheckResourceAttr("data.jobbie_namespace.billing", "deletion_protection", "false"),
			),
		}},
	})
}
