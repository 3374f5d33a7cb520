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
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

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
				Config:      keyBlock(`name = "k"`, `role = "Super User"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`role "Super User" is neither a built-in role`),
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

func rotationConfig(ns, rotation, grace, desc string) string {
	return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_api_key" "r" {
  name                  = "rotated"
  description           = %q
  role                  = "producer"
  namespaces            = [%q]
  rotation              = %q
  rotation_grace_period = %q
}
`, desc, ns, rotation, grace)
}

// A new rotation value gives the key a new secret in place; the old one
// works for the grace period only.
func TestAccAPIKeyRotation(t *testing.T) {
	ns := accNamespace(t, "rotate")
	const addr = "jobbie_api_key.r"
	var id, first, second string
	works := func(secret string) error {
		_, err := client.New(gatewayURL, secret, client.WithNamespace(ns)).ListQueues(ctx(t))
		return err
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             keyRevoked(&id),
		Steps: []resource.TestStep{
			{
				Config: rotationConfig(ns, "v1", "4s", "ci"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith(addr, "id", func(v string) error { id = v; return nil }),
					resource.TestCheckResourceAttrWith(addr, "key", func(v string) error { first = v; return nil }),
					resource.TestCheckResourceAttr(addr, "description", "ci"),
					resource.TestCheckNoResourceAttr(addr, "rotated_at"),
					resource.TestCheckNoResourceAttr(addr, "previous_key_valid_until"),
				),
			},
			{
				Config: rotationConfig(ns, "v2", "4s", "ci"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(addr, tfjsonpath.New("key")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPtr(addr, "id", &id),
					resource.TestCheckResourceAttrSet(addr, "rotated_at"),
					resource.TestCheckResourceAttrSet(addr, "previous_key_valid_until"),
					resource.TestCheckResourceAttrWith(addr, "key", func(v string) error {
						if v == first {
							return fmt.Errorf("the secret did not change")
						}
						second = v
						return nil
					}),
					func(*terraform.State) error {
						if err := works(first); err != nil {
							return fmt.Errorf("the old secret, within its grace period: %w", err)
						}
						if err := works(second); err != nil {
							return fmt.Errorf("the new secret: %w", err)
						}
						deadline := time.Now().Add(30 * time.Second)
						for works(first) == nil {
							if time.Now().After(deadline) {
								return fmt.Errorf("the old secret still works 30s after a 4s grace period")
							}
							time.Sleep(250 * time.Millisecond)
						}
						if err := works(first); !client.IsUnauthenticated(err) {
							return fmt.Errorf("the old secret after its grace period: %v, want 401", err)
						}
						return works(second)
					},
				),
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"key", "rotation", "rotation_grace_period", "previous_key_valid_until"},
			},
			{ // the grace period alone rotates nothing
				Config: rotationConfig(ns, "v2", "1m", "ci"),
				Check:  resource.TestCheckResourceAttrPtr(addr, "key", &second),
			},
			{ // a new description is a new key
				Config: rotationConfig(ns, "v2", "1m", "ci, renamed"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.TestCheckResourceAttrWith(addr, "id", func(v string) error {
					if v == id {
						return fmt.Errorf("still key %s", v)
					}
					id = v
					return nil
				}),
			},
		},
	})
}
