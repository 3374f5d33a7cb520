package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccNamespaceAndRoleDataSources(t *testing.T) {
	ns := accNamespace(t, "dsns")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config:      `data "jobbie_namespace" "nope" { name = "no-such-namespace" }`,
				ExpectError: regexp.MustCompile(`Namespace no-such-namespace does not exist`),
			},
			{
				Config:      `data "jobbie_role" "x" { name = "root" }`,
				ExpectError: regexp.MustCompile(`The tenant has no role named root`),
			},
			{
				Config: `
data "jobbie_namespace" "ns" { name = "` + ns + `" }
data "jobbie_role" "producer" { name = "producer" }
data "jobbie_role" "owner" { name = "owner" }
`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.jobbie_namespace.ns", "name", ns),
					resource.TestMatchResourceAttr("data.jobbie_namespace.ns", "created_at", regexp.MustCompile(`^20\d\d-`)),
					resource.TestCheckResourceAttr("data.jobbie_role.producer", "builtin", "true"),
					resource.TestCheckTypeSetElemNestedAttrs("data.jobbie_role.producer", "permissions.*",
						map[string]string{"actions.0": "job.enqueue", "namespaces.0": "*", "queues.0": "*"}),
					resource.TestCheckResourceAttr("data.jobbie_role.owner", "permissions.0.actions.0", "*"),
				),
			},
		},
	})
}
