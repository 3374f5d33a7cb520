package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/jobbie/jobbie/client"
	provider "github.com/jobbie/jobbie/terraform-provider"
)

// The API's refusals come back as errors carrying its message.
func TestAccAPIErrorsSurface(t *testing.T) {
	ns := accNamespace(t, "errs")
	viewer, err := api().CreateKey(ctx(t), client.CreateKeyRequest{Name: "viewer", Role: "viewer", Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{ // (the last step's configuration destroys what the steps made)
			{ // a key that may not manage queues: 403 with the API's words
				Config: fmt.Sprintf(`
provider "jobbie" {
  api_key   = %q
  namespace = %q
}
resource "jobbie_queue" "q" {
  name = "q"
}
`, viewer.Token, ns),
				ExpectError: regexp.MustCompile(`(?s)Could not create queue.*403 forbidden.*not allowed to do this`),
			},
			{ // a key that is no key: 401
				Config: `
provider "jobbie" {
  api_key = "not-a-key"
}
data "jobbie_queues" "all" {}
`,
				ExpectError: regexp.MustCompile(`(?s)401 unauthenticated.*Check the provider's api_key`),
			},
			{ // two schedules of one name in one queue: the second is a 409 naming the import id
				Config: providerBlock(ns) + `
resource "jobbie_schedule" "a" {
  name  = "twice"
  queue = "q"
  cron  = "@daily"
}
resource "jobbie_schedule" "b" {
  name       = "twice"
  queue      = "q"
  cron       = "@hourly"
  depends_on = [jobbie_schedule.a]
}
`,
				ExpectError: regexp.MustCompile(`(?s)Schedule already exists.*already has a schedule named "twice".*409 conflict.*terraform import <address>\s+` + ns + `/q/twice`),
			},
		},
	})
}

func TestAccProviderConfiguration(t *testing.T) {
	accPreCheck(t)
	t.Setenv(provider.EnvAPIKey, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config:      `data "jobbie_role" "r" { name = "viewer" }`,
				ExpectError: regexp.MustCompile(`(?s)Missing API key.*JOBBIE_API_KEY`),
			},
			{
				Config: `
provider "jobbie" {
  endpoint = "ftp://jobbie.example.com"
  api_key  = "k"
}
data "jobbie_role" "r" { name = "viewer" }
`,
				ExpectError: regexp.MustCompile(`must be an http:// or https:// URL`),
			},
			{
				Config: fmt.Sprintf(`
provider "jobbie" {
  endpoint = %q
  api_key  = %q
}
data "jobbie_role" "r" { name = "viewer" }
`, gatewayURL, ownerKey),
				Check: resource.TestCheckResourceAttr("data.jobbie_role.r", "builtin", "true"),
			},
		},
	})
}
