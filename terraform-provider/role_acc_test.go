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
	"github.com/jobbie/jobbie/tenancy"
)

// roleConfig declares role name, limited to the queues matching queues in
// namespace ns, and a key of it.
func roleConfig(name, ns, queues, desc string) string {
	return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_role" "support" {
  name        = %q
  description = %q
  permissions = [
    { actions = ["job.enqueue", "job.read", "job.manage"], namespaces = [%q], queues = [%q] },
    { actions = ["queue.read"], namespaces = [%q], queues = ["*"] },
  ]
}

resource "jobbie_api_key" "support" {
  name       = "support"
  role       = jobbie_role.support.name
  namespaces = [%q]
}
`, name, desc, ns, queues, ns, ns)
}

// A custom role limited to emails.* queues: its key is allowed on
// emails.send and refused on billing.charge.
func TestAccRole(t *testing.T) {
	ns := accNamespace(t, "roles")
	name := fmt.Sprintf("support-%d", nsSeq.Add(1))
	const addr = "jobbie_role.support"
	var secret string
	enqueue := func(queue string) error {
		_, err := client.New(gatewayURL, secret, client.WithNamespace(ns)).Enqueue(ctx(t), client.EnqueueRequest{Queue: queue})
		return err
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := api().GetRole(ctx(nil), name); !client.IsNotFound(err) {
				return fmt.Errorf("role %s after destroy: %v", name, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: roleConfig(name, ns, "emails.*", "mail support"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", name),
					resource.TestCheckResourceAttr(addr, "permissions.#", "2"),
					resource.TestCheckResourceAttr(addr, "permissions.0.queues.0", "emails.*"),
					resource.TestCheckResourceAttrSet(addr, "created_at"),
					resource.TestCheckResourceAttr("jobbie_api_key.support", "role", name),
					resource.TestCheckResourceAttrWith("jobbie_api_key.support", "key", func(v string) error { secret = v; return nil }),
					func(*terraform.State) error {
						if err := enqueue("emails.send"); err != nil {
							return fmt.Errorf("enqueue to emails.send: %w", err)
						}
						if err := enqueue("billing.charge"); !client.IsForbidden(err) {
							return fmt.Errorf("enqueue to billing.charge: %v, want 403", err)
						}
						return nil
					},
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
			},
			{ // widened in place: the same key may now enqueue to billing.charge
				Config: roleConfig(name, ns, "*", "all of support"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("jobbie_api_key.support", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					deadline := time.Now().Add(10 * time.Second)
					for {
						err := enqueue("billing.charge")
						if err == nil {
							return nil
						}
						if time.Now().After(deadline) {
							return fmt.Errorf("enqueue to billing.charge after the role was widened: %w", err)
						}
						time.Sleep(100 * time.Millisecond)
					}
				},
			},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					_, err := api().UpdateRole(ctx(t), client.Role{Name: name, Permissions: []client.Permission{
						{Actions: []string{"job.read"}, Namespaces: []string{ns}, Queues: []string{"*"}}}})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:             roleConfig(name, ns, "*", "all of support"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: roleConfig(name, ns, "*", "all of support"),
				Check:  resource.TestCheckResourceAttr(addr, "permissions.#", "2"),
			},
		},
	})
}

func TestAccRoleValidationAndInUse(t *testing.T) {
	ns := accNamespace(t, "rolev")
	bad := func(name, perms, want string) resource.TestStep {
		return resource.TestStep{
			Config:      fmt.Sprintf("resource \"jobbie_role\" \"r\" {\n  name = %q\n  permissions = [%s]\n}\n", name, perms),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	ok := `{ actions = ["job.read"], namespaces = ["*"], queues = ["*"] }`
	name := fmt.Sprintf("inuse-%d", nsSeq.Add(1))
	roleOnly := providerBlock(ns) + fmt.Sprintf("resource \"jobbie_role\" \"r\" {\n  name = %q\n  permissions = [%s]\n}\n", name, ok)
	var keyID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			bad("viewer", ok, `"viewer" is a built-in role`),
			bad("Support", ok, `must be 1-63 lowercase letters`),
			bad("x", ``, `(?s)permissions.*at least 1`),
			bad("x", `{ actions = ["job.delete"], namespaces = ["*"], queues = ["*"] }`,
				`(?s)permissions\[0\]\.actions\[0\].*unknown action\s+"job.delete".*job.manage`),
			bad("x", `{ actions = ["job.read"], namespaces = ["*"], queues = ["emails.*.x"] }`, `(?s)permissions\[0\]\.queues\[0\]`),
			{
				Config: roleOnly,
				Check: func(*terraform.State) error {
					k, err := api().CreateKey(ctx(t), client.CreateKeyRequest{Name: "outside", Role: tenancy.Role(name), Namespaces: []string{ns}})
					if err == nil {
						keyID = k.ID
					}
					return err
				},
			},
			{ // a role a live key carries is not deleted
				Config:      roleOnly,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Role ` + name + ` is in use.*Revoke the keys`),
			},
			{ // once the key is revoked, it may go; deleted outside Terraform, it is created again
				PreConfig: func() {
					if err := api().DeleteKey(ctx(t), keyID); err != nil {
						t.Fatal(err)
					}
					if err := api().DeleteRole(ctx(t), name); err != nil {
						t.Fatal(err)
					}
				},
				Config: roleOnly,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("jobbie_role.r", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}
