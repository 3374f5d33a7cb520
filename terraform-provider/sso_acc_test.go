package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

const ssoAccSecret = "tf-secret-that-the-api-never-answers"

// ssoConfig is a jobbie_sso with issuer and the group_roles lines given.
func ssoConfig(issuer string, groupRoles ...string) string {
	var gr strings.Builder
	for _, g := range groupRoles {
		group, role, _ := strings.Cut(g, "=")
		fmt.Fprintf(&gr, "    { group = %q, role = %q },\n", group, role)
	}
	return fmt.Sprintf(`resource "jobbie_sso" "s" {
  issuer_url      = %q
  client_id       = "jobbie-console"
  client_secret   = %q
  allowed_domains = ["example.com"]
  group_roles = [
%s  ]
  default_role = "viewer"
}
`, issuer, ssoAccSecret, gr.String())
}

// apiSSO checks what the API holds: the issuer and group roles, a secret
// kept, and no answer carrying it.
func apiSSO(t *testing.T, issuer string, groupRoles ...client.SSOGroupRole) resource.TestCheckFunc {
	return func(*terraform.State) error {
		held, err := api().GetSSO(ctx(t))
		if err != nil {
			return err
		}
		if held.IssuerURL != issuer || !held.ClientSecretSet || fmt.Sprint(held.GroupRoles) != fmt.Sprint(groupRoles) {
			return fmt.Errorf("the API holds %+v, want issuer %s and group roles %v with a secret", held, issuer, groupRoles)
		}
		if strings.Contains(fmt.Sprintf("%+v", held), ssoAccSecret) {
			return fmt.Errorf("the API answered the client secret")
		}
		return nil
	}
}

// Create → import (the secret is not read back) → update in place →
// deleted outside Terraform, planned again → a role that does not exist
// refused naming it with nothing changed → destroy, which deletes it.
// The tenant has one SSO configuration: no other test sets it.
func TestAccSSO(t *testing.T) {
	const addr = "jobbie_sso.s"
	const issuerA, issuerB = "https://login.example.com", "https://idp.example.org/tenant-1"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := api().GetSSO(ctx(t)); !client.IsNotFound(err) {
				return fmt.Errorf("the configuration is still there: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: ssoConfig(issuerA, "platform=admin"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", "sso"),
					resource.TestCheckResourceAttr(addr, "client_secret", ssoAccSecret),
					resource.TestCheckResourceAttr(addr, "client_secret_set", "true"),
					resource.TestCheckResourceAttr(addr, "groups_claim", "groups"),
					resource.TestCheckResourceAttr(addr, "redirect_path", "/console/api/sso/callback"),
					resource.TestCheckResourceAttr(addr, "group_roles.0.role", "admin"),
					resource.TestCheckNoResourceAttr(addr, "allowed_groups"),
					resource.TestCheckResourceAttrSet(addr, "updated_at"),
					apiSSO(t, issuerA, client.SSOGroupRole{Group: "platform", Role: "admin"}),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: "sso", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"client_secret"}},
			{
				Config: ssoConfig(issuerB, "platform=admin", "support=developer"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: apiSSO(t, issuerB, client.SSOGroupRole{Group: "platform", Role: "admin"},
					client.SSOGroupRole{Group: "support", Role: "developer"}),
			},
			{ // deleted outside Terraform: planned again
				PreConfig: func() {
					if err := api().DeleteSSO(ctx(t)); err != nil {
						t.Fatal(err)
					}
				},
				Config:             ssoConfig(issuerB, "platform=admin", "support=developer"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: ssoConfig(issuerB, "platform=admin"), Check: apiSSO(t, issuerB, client.SSOGroupRole{Group: "platform", Role: "admin"})},
			{ // the API judges the roles: refused, naming the entry
				Config:      ssoConfig(issuerB, "platform=admin", "support=no-such-role"),
				ExpectError: regexp.MustCompile(`(?s)group_roles\[1\]\.role`),
			},
			{ // nothing changed
				Config:           ssoConfig(issuerB, "platform=admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            apiSSO(t, issuerB, client.SSOGroupRole{Group: "platform", Role: "admin"}),
			},
		},
	})
}

func TestAccSSOValidation(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: `resource "jobbie_sso" "s" { client_id = "c" }`, PlanOnly: true,
				ExpectError: regexp.MustCompile(`"issuer_url" is required`)},
			{Config: `resource "jobbie_sso" "s" {
  issuer_url    = "https://login.example.com"
  client_id     = "c"
  client_secret = ""
}`, PlanOnly: true, ExpectError: regexp.MustCompile(`client_secret string length must be between 1 and 1024`)},
			{ResourceName: "jobbie_sso.s", Config: `resource "jobbie_sso" "s" {
  issuer_url = "https://login.example.com"
  client_id  = "c"
}`, ImportState: true, ImportStateId: "other", ExpectError: regexp.MustCompile(`Expected the import id sso`)},
		},
	})
}
