package provider_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func egressConfig(ns string, hosts ...string) string {
	list := ""
	for i, h := range hosts {
		if i > 0 {
			list += ", "
		}
		list += fmt.Sprintf("%q", h)
	}
	return providerBlock(ns) + fmt.Sprintf("resource \"jobbie_namespace_egress\" \"e\" {\n  egress_allow = [%s]\n}\n", list)
}

// apiEgress checks the egress allow-list the API holds for ns, in any
// order (the resource's is a set).
func apiEgress(t *testing.T, ns string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		held, err := api().GetNamespaceEgress(ctx(t), ns)
		if err != nil {
			return err
		}
		got, exp := slices.Sorted(slices.Values(held)), slices.Sorted(slices.Values(want))
		if !slices.Equal(got, exp) || exp == nil && held == nil {
			return fmt.Errorf("the API holds %q, want %q", held, want)
		}
		return nil
	}
}

// Create → import → update → drift shown and put back → a bad entry
// refused naming it with nothing changed → an empty set → destroy, which
// removes the list.
func TestAccNamespaceEgress(t *testing.T) {
	ns := accNamespace(t, "egress")
	const addr = "jobbie_namespace_egress.e"
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			return apiEgress(t, ns)(nil)
		},
		Steps: []resource.TestStep{
			{
				Config: egressConfig(ns, "hooks.example.com", "*.example.net"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "egress_allow.#", "2"),
					resource.TestCheckTypeSetElemAttr(addr, "egress_allow.*", "*.example.net"),
					apiEgress(t, ns, "hooks.example.com", "*.example.net"),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: ns, ImportStateVerify: true},
			{
				Config:           egressConfig(ns, "hooks.example.com", "10.1.2.3"),
				ConfigPlanChecks: update,
				Check:            apiEgress(t, ns, "hooks.example.com", "10.1.2.3"),
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					if _, err := api().PutNamespaceEgress(ctx(t), ns, []string{"other.example.org"}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             egressConfig(ns, "hooks.example.com", "10.1.2.3"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and an apply puts it back
				Config:           egressConfig(ns, "hooks.example.com", "10.1.2.3"),
				ConfigPlanChecks: update,
				Check:            apiEgress(t, ns, "hooks.example.com", "10.1.2.3"),
			},
			{ // the API judges each entry: refused, naming it
				Config:      egressConfig(ns, "hooks.example.com", "no such host"),
				ExpectError: regexp.MustCompile(`(?s)egress_allow.*"no such host".*is not a host name`),
			},
			{ // nothing changed
				Config:           egressConfig(ns, "hooks.example.com", "10.1.2.3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            apiEgress(t, ns, "hooks.example.com", "10.1.2.3"),
			},
			{ // an empty set: no list
				Config:           egressConfig(ns),
				ConfigPlanChecks: update,
				Check:            resource.ComposeAggregateTestCheckFunc(resource.TestCheckResourceAttr(addr, "egress_allow.#", "0"), apiEgress(t, ns)),
			},
			{Config: egressConfig(ns, "*.example.net"), Check: apiEgress(t, ns, "*.example.net")},
		},
	})
}

func TestAccNamespaceEgressValidation(t *testing.T) {
	ns := accNamespace(t, "egbad")
	hosts := make([]string, 65)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%d.example.com", i)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: egressConfig(ns, hosts...), PlanOnly: true, ExpectError: regexp.MustCompile(`set must contain at most 64`)},
			{Config: providerBlock(ns) + "resource \"jobbie_namespace_egress\" \"e\" {}\n", PlanOnly: true,
				ExpectError: regexp.MustCompile(`"egress_allow" is required`)},
			{ // another tenant's namespace, or one that does not exist, is not found
				Config:      providerBlock(ns) + "resource \"jobbie_namespace_egress\" \"e\" {\n  namespace = \"nope-none\"\n  egress_allow = []\n}\n",
				ExpectError: regexp.MustCompile(`(?s)egress allow-list of namespace nope-none.*404`),
			},
		},
	})
}
