package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

func apiKeyConfig(ns, role, expires string) string {
	return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_api_key" "ci" {
  name       = "ci producer"
  role       = %q
  namespaces = [%q]
  expires_at = %q
}
`, role, ns, expires)
}

func TestAccAPIKey(t *testing.T) {
	ns := accNamespace(t, "keys")
	const addr = "jobbie_api_key.ci"
	// An offset that is not UTC: the API answers in UTC, and the same
	// instant must not show as a change.
	expires := time.Now().Add(48 * time.Hour).Truncate(time.Second).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
	var firstID, secret string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             keyRevoked(&firstID),
		Steps: []resource.TestStep{
			{
				Config: apiKeyConfig(ns, "producer", expires),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr(addr, "key", regexp.MustCompile(`^ey`)),
					resource.TestCheckResourceAttr(addr, "role", "producer"),
					resource.TestCheckResourceAttr(addr, "namespaces.#", "1"),
					resource.TestCheckResourceAttr(addr, "expires_at", expires),
					resource.TestCheckResourceAttrWith(addr, "id", func(v string) error { firstID = v; return nil }),
					resource.TestCheckResourceAttrWith(addr, "key", func(v string) error { secret = v; return nil }),
					func(*terraform.State) error { // the secret works, as a producer of ns
						c := client.New(gatewayURL, secret, client.WithNamespace(ns))
						if _, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "emails.send"}); err != nil {
							return fmt.Errorf("enqueue with the new key: %w", err)
						}
						if _, err := c.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "x", Queue: "q", Cron: "@daily"}); !client.IsForbidden(err) {
							return fmt.Errorf("a producer key created a schedule: %v", err)
						}
						return nil
					},
				),
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"key", "expires_at"}, // the secret is never readable after creation
				ImportStateCheck: func(is []*terraform.InstanceState) error { // the same instant, written in UTC
					want, _ := time.Parse(time.RFC3339, expires)
					got, err := time.Parse(time.RFC3339, is[0].Attributes["expires_at"])
					if err != nil || !got.Equal(want) {
						return fmt.Errorf("imported expires_at %q, want the instant %s", is[0].Attributes["expires_at"], expires)
					}
					return nil
				},
			},
			{ // a new role is a new key
				Config: apiKeyConfig(ns, "worker", expires),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "role", "worker"),
					func(s *terraform.State) error {
						old := firstID
						firstID = s.RootModule().Resources[addr].Primary.ID
						if err := keyRevoked(&old)(s); err != nil {
							return fmt.Errorf("the replaced key: %w", err)
						}
						return nil
					},
				),
			},
			{ // revoked outside Terraform: the plan shows it
				PreConfig: func() {
					if err := api().DeleteKey(ctx(t), firstID); err != nil {
						t.Fatal(err)
					}
				},
				Config:             apiKeyConfig(ns, "worker", expires),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and the apply mints it again
				Config: apiKeyConfig(ns, "worker", expires),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.TestCheckResourceAttrWith(addr, "id", func(v string) error {
					if v == firstID {
						return fmt.Errorf("still the revoked key %s", v)
					}
					firstID = v
					return nil
				}),
			},
		},
	})
}

// A key left to its defaults gets the provider key's default namespace and
// no expiry; an invalid role or name is refused at plan time.
func TestAccAPIKeyDefaultsAndValidation(t *testing.T) {
	accPreCheck(t)
	const addr = "jobbie_api_key.k"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config:      keyBlock(`name = "k"`, `role = "superuser"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`role "superuser" is not one of`),
			},
			{
				Config:      keyBlock(`name = "no/slash"`, `role = "viewer"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Invalid API key name`),
			},
			{
				Config:      keyBlock(`name = "past"`, `role = "viewer"`, `expires_at = "2001-01-01T00:00:00Z"`),
				ExpectError: regexp.MustCompile(`(?s)Could not create API key past.*expires_at`),
			},
			{
				Config: keyBlock(`name = "k"`, `role = "viewer"`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "namespaces.#", "1"),
					resource.TestCheckTypeSetElemAttr(addr, "namespaces.*", "default"),
					resource.TestCheckNoResourceAttr(addr, "expires_at"),
				),
			},
		},
	})
}

func keyBlock(attrs ...string) string {
	return "resource \"jobbie_api_key\" \"k\" {\n  " + strings.Join(attrs, "\n  ") + "\n}\n"
}

// keyRevoked checks the key *id is revoked (or gone).
func keyRevoked(id *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		keys, err := api().ListKeys(ctx(nil))
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.ID == *id && k.RevokedAt == nil {
				return fmt.Errorf("API key %s is not revoked", k.ID)
			}
		}
		return nil
	}
}
