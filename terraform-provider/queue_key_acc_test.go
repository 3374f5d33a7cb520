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

// keyedQueue is a queue capped per concurrency key (keyMax 0: no cap).
func keyedQueue(ns string, keyMax int, description string) string {
	kc := ""
	if keyMax > 0 {
		kc = fmt.Sprintf("key_concurrency = { max = %d }", keyMax)
	}
	return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_queue" "tenants" {
  name        = "per.tenant"
  description = %q
  concurrency = 20
  %s
}
`, description, kc)
}

// apiKeyMax checks the key cap the API holds for ns/per.tenant (0: none)
// and that the rest of the configuration is still there.
func apiKeyMax(t *testing.T, ns string, want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		q, err := api().WithNamespace(ns).GetQueue(ctx(t), "per.tenant")
		if err != nil {
			return err
		}
		if q.Concurrency == nil || *q.Concurrency != 20 {
			return fmt.Errorf("concurrency: the API holds %+v", q)
		}
		switch {
		case want == 0 && q.KeyConcurrency != nil:
			return fmt.Errorf("the API holds key_concurrency %+v, want none", *q.KeyConcurrency)
		case want != 0 && (q.KeyConcurrency == nil || q.KeyConcurrency.Max != want):
			return fmt.Errorf("the API holds key_concurrency %+v, want max %d", q.KeyConcurrency, want)
		}
		return nil
	}
}

// setKeyMax changes the queue's key cap outside Terraform, keeping the
// rest of its configuration (0 removes the cap).
func setKeyMax(t *testing.T, ns string, n int64) {
	c := api().WithNamespace(ns)
	q, err := c.GetQueue(ctx(t), "per.tenant")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := client.QueueSpecOf(q)
	if err != nil {
		t.Fatal(err)
	}
	spec.KeyConcurrency = nil
	if n > 0 {
		spec.KeyConcurrency = &n
	}
	if _, err := c.PutQueue(ctx(t), "per.tenant", spec); err != nil {
		t.Fatal(err)
	}
}

func TestAccQueueKeyConcurrency(t *testing.T) {
	ns := accNamespace(t, "qkey")
	const addr = "jobbie_queue.tenants"
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             queueGone(ns, "per.tenant"),
		Steps: []resource.TestStep{
			{
				Config: keyedQueue(ns, 2, "one"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "key_concurrency.max", "2"),
					apiKeyMax(t, ns, 2),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: ns + "/per.tenant", ImportStateVerify: true},
			{ // another setting changed: the whole-configuration PUT keeps the cap
				Config:           keyedQueue(ns, 2, "two"),
				ConfigPlanChecks: update,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "description", "two"),
					resource.TestCheckResourceAttr(addr, "key_concurrency.max", "2"),
					apiKeyMax(t, ns, 2),
				),
			},
			{ // the cap changed
				Config:           keyedQueue(ns, 10000, "two"),
				ConfigPlanChecks: update,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "key_concurrency.max", "10000"),
					apiKeyMax(t, ns, 10000),
				),
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig:          func() { setKeyMax(t, ns, 7) },
				Config:             keyedQueue(ns, 10000, "two"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and an apply puts it back
				Config:           keyedQueue(ns, 10000, "two"),
				ConfigPlanChecks: update,
				Check:            apiKeyMax(t, ns, 10000),
			},
			{ // removed from the configuration: removed from the queue
				Config:           keyedQueue(ns, 0, "two"),
				ConfigPlanChecks: update,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(addr, "key_concurrency"),
					resource.TestCheckNoResourceAttr(addr, "key_concurrency.max"),
					apiKeyMax(t, ns, 0),
				),
			},
			{ // set outside Terraform on a queue declared without: drift too
				PreConfig:          func() { setKeyMax(t, ns, 3) },
				Config:             keyedQueue(ns, 0, "two"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:           keyedQueue(ns, 0, "two"),
				ConfigPlanChecks: update,
				Check:            apiKeyMax(t, ns, 0),
			},
		},
	})
}

func TestAccQueueKeyConcurrencyValidation(t *testing.T) {
	ns := accNamespace(t, "qkeybad")
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
			bad(`key_concurrency = { max = 0 }`, `between 1 and 10000`),
			bad(`key_concurrency = { max = 10001 }`, `between 1 and 10000`),
			bad(`key_concurrency = {}`, `(?s)Incorrect attribute value type.*max`),
			{ // a value not known at plan time is checked when it is, before any request
				Config: providerBlock(ns) + `
resource "terraform_data" "max" { input = 20000 }
resource "jobbie_queue" "bad" {
  name            = "q"
  key_concurrency = { max = terraform_data.max.output }
}
`,
				ExpectError: regexp.MustCompile(`key_concurrency.max value must be between 1 and 10000, got: 20000`),
			},
		},
	})
}
