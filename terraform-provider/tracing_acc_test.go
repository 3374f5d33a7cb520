package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// The acceptance tests' jobbie dev allows inside addresses
// (--push-allow-private), so these collectors' URLs are on loopback.
const (
	collectorA = "https://127.0.0.1:4318/v1/traces"
	collectorB = "https://localhost:4319/v1/traces"
)

func tracingConfig(ns, url string) string {
	return providerBlock(ns) + fmt.Sprintf("resource \"jobbie_tracing\" \"t\" {\n  otlp_endpoint = %q\n}\n", url)
}

// apiTracing checks the OTLP endpoint the API holds for ns.
func apiTracing(t *testing.T, ns, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		held, err := api().WithNamespace(ns).GetTracing(ctx(t))
		if err != nil {
			return err
		}
		if held != want {
			return fmt.Errorf("the API holds %q, want %q", held, want)
		}
		return nil
	}
}

// Create → import → update → removed outside Terraform, planned again →
// a bad URL refused naming otlp_endpoint with nothing changed → destroy,
// which removes the endpoint.
func TestAccTracing(t *testing.T) {
	ns := accNamespace(t, "otlp")
	const addr = "jobbie_tracing.t"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             func(*terraform.State) error { return apiTracing(t, ns, "")(nil) },
		Steps: []resource.TestStep{
			{
				Config: tracingConfig(ns, collectorA),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "otlp_endpoint", collectorA),
					apiTracing(t, ns, collectorA),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: ns, ImportStateVerify: true},
			{
				Config: tracingConfig(ns, collectorB),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: apiTracing(t, ns, collectorB),
			},
			{ // removed outside Terraform: planned again
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).SetTracing(ctx(t), ""); err != nil {
						t.Fatal(err)
					}
				},
				Config:             tracingConfig(ns, collectorB),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: tracingConfig(ns, collectorB), Check: apiTracing(t, ns, collectorB)},
			{ // the API judges the URL: refused, naming it
				Config:      tracingConfig(ns, "http://127.0.0.1:4318/v1/traces"),
				ExpectError: regexp.MustCompile(`(?s)otlp_endpoint.*https`),
			},
			{ // nothing changed
				Config:           tracingConfig(ns, collectorB),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            apiTracing(t, ns, collectorB),
			},
		},
	})
}

func TestAccTracingValidation(t *testing.T) {
	ns := accNamespace(t, "otlpbad")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: tracingConfig(ns, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`otlp_endpoint string length must be at least 1`)},
			{Config: providerBlock(ns) + "resource \"jobbie_tracing\" \"t\" {}\n", PlanOnly: true,
				ExpectError: regexp.MustCompile(`"otlp_endpoint" is required`)},
			{ // another tenant's namespace, or one that does not exist, is not found
				Config:      providerBlock(ns) + "resource \"jobbie_tracing\" \"t\" {\n  namespace = \"nope-none\"\n  otlp_endpoint = \"" + collectorA + "\"\n}\n",
				ExpectError: regexp.MustCompile(`(?s)OTLP endpoint of namespace nope-none.*404`),
			},
		},
	})
}
