package provider_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/jobbie/jobbie/client"
)

func tenantKey(t *testing.T) (key, id string) {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	key = base64.StdEncoding.EncodeToString(b)
	id, err := client.TenantKeyID(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, id
}

// encryptionConfig is the resource with body's attributes.
func encryptionConfig(ns string, body ...string) string {
	return providerBlock(ns) + "resource \"jobbie_namespace_encryption\" \"e\" {\n  " + strings.Join(body, "\n  ") + "\n}\n"
}

func keyAttr(key string) string { return fmt.Sprintf("tenant_key_wo = %q", key) }

// apiEncryption checks what the API holds for ns.
func apiEncryption(t *testing.T, ns string, check func(*client.Encryption) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		e, err := api().WithNamespace(ns).GetEncryption(ctx(t))
		if err != nil {
			return err
		}
		return check(e)
	}
}

func keyInUse(t *testing.T, ns, id string) resource.TestCheckFunc {
	return apiEncryption(t, ns, func(e *client.Encryption) error {
		if e.TenantKeyID == nil {
			return fmt.Errorf("the API holds no tenant key, want %s", id)
		}
		if *e.TenantKeyID != id {
			return fmt.Errorf("the API's tenant key is %s, want %s", *e.TenantKeyID, id)
		}
		return nil
	})
}

// sealedJob enqueues a job into ns and checks, later, whether its payload
// reads back or is refused as sealed under a revoked key.
type sealedJob struct {
	t  *testing.T
	ns string
	id string
}

func (j *sealedJob) enqueue(*terraform.State) error {
	res, err := api().WithNamespace(j.ns).Enqueue(ctx(j.t), client.EnqueueRequest{Queue: "charges", Payload: map[string]string{"card": "4111"}})
	if err != nil {
		return err
	}
	j.id = res.JobID
	return nil
}

func (j *sealedJob) readable(*terraform.State) error {
	d, err := api().WithNamespace(j.ns).GetJob(ctx(j.t), j.id)
	if err != nil {
		return fmt.Errorf("job %s: %w", j.id, err)
	}
	if !strings.Contains(string(d.Payload), "4111") {
		return fmt.Errorf("job %s payload %s", j.id, d.Payload)
	}
	return nil
}

func (j *sealedJob) revoked(*terraform.State) error {
	_, err := api().WithNamespace(j.ns).GetJob(ctx(j.t), j.id)
	if !client.IsEncryptionKeyRevoked(err) {
		return fmt.Errorf("job %s: want encryption_key_revoked, got %v", j.id, err)
	}
	return nil
}

// Create with a tenant key → no diff → import, and an import block with
// the key that plans no change → rotate by changing the
// key (the job sealed before stays readable) → rotated outside Terraform,
// rotated back → revoke (the job unreadable) → no diff → refusals: back
// to unrevoked without a key, revoke with a key, a malformed key → a new
// key starts generation 2 → destroy, which turns sealing off and keeps
// the key: what it sealed stays readable.
func TestAccNamespaceEncryption(t *testing.T) {
	ns := accNamespace(t, "crypt")
	const addr = "jobbie_namespace_encryption.e"
	k1, id1 := tenantKey(t)
	k2, id2 := tenantKey(t)
	k3, id3 := tenantKey(t)
	outside, _ := tenantKey(t)
	first, last := &sealedJob{t: t, ns: ns}, &sealedJob{t: t, ns: ns}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			apiEncryption(t, ns, func(e *client.Encryption) error {
				if e.Enabled || e.SearchDecrypt || e.KeySource != client.KeySourceTenant {
					return fmt.Errorf("after destroy the API holds %+v, want sealing off and the key kept", e)
				}
				return nil
			}),
			keyInUse(t, ns, id3),
			last.readable,
		),
		Steps: []resource.TestStep{
			{
				Config: encryptionConfig(ns, keyAttr(k1), "search_decrypt = true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestCheckResourceAttr(addr, "search_decrypt", "true"),
					resource.TestCheckResourceAttr(addr, "key_source", "tenant"),
					resource.TestCheckResourceAttr(addr, "tenant_key_id", id1),
					resource.TestCheckResourceAttr(addr, "generation", "1"),
					resource.TestCheckResourceAttr(addr, "revoked", "false"),
					resource.TestCheckResourceAttr(addr, "revoked_keys.#", "0"),
					resource.TestCheckNoResourceAttr(addr, "tenant_key_wo"),
					keyInUse(t, ns, id1),
					first.enqueue,
				),
			},
			{
				Config:           encryptionConfig(ns, keyAttr(k1), "search_decrypt = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{ResourceName: addr, ImportState: true, ImportStateId: ns, ImportStateVerify: true},
			{ // an import block with the key tenant_key_id names plans nothing but the import
				Config:        encryptionConfig(ns, keyAttr(k1), "search_decrypt = true"),
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: ns, ImportStateKind: resource.ImportBlockWithID,
			},
			{ // a new key is a rotation, in place
				Config: encryptionConfig(ns, keyAttr(k2), "search_decrypt = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("tenant_key_id"), knownvalue.StringExact(id2)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "tenant_key_id", id2),
					resource.TestCheckResourceAttr(addr, "generation", "1"),
					keyInUse(t, ns, id2),
					first.readable,
				),
			},
			{ // rotated outside Terraform: planned back to the configured key
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).SetEncryption(ctx(t), client.EncryptionSpec{TenantKey: outside}); err != nil {
						t.Fatal(err)
					}
				},
				Config: encryptionConfig(ns, keyAttr(k2), "search_decrypt = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(keyInUse(t, ns, id2), first.readable),
			},
			{ // revoke: on purpose, and the job sealed under the key is unreadable
				Config: encryptionConfig(ns, "revoked = true", "search_decrypt = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "revoked", "true"),
					resource.TestCheckResourceAttr(addr, "key_source", "revoked"),
					resource.TestCheckNoResourceAttr(addr, "tenant_key_id"),
					resource.TestCheckResourceAttr(addr, "revoked_keys.#", "1"),
					resource.TestCheckResourceAttr(addr, "revoked_keys.0.key_id", id2),
					resource.TestCheckResourceAttr(addr, "revoked_keys.0.generation", "1"),
					first.revoked,
				),
			},
			{
				Config:           encryptionConfig(ns, "revoked = true", "search_decrypt = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{ // nothing is sealed under the operator's key in the revoked one's place
				Config:      encryptionConfig(ns, "search_decrypt = true"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)tenant key was revoked.*give a new tenant_key_wo`),
			},
			{
				Config:      encryptionConfig(ns, "revoked = true", keyAttr(k3)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`revoked = true cannot go with tenant_key_wo`),
			},
			{
				Config:      encryptionConfig(ns, keyAttr("not-a-key")),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid tenant key.*32 bytes`),
			},
			{ // a new key starts the next generation; the revoked stays unreadable
				Config: encryptionConfig(ns, keyAttr(k3), "search_decrypt = true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "revoked", "false"),
					resource.TestCheckResourceAttr(addr, "key_source", "tenant"),
					resource.TestCheckResourceAttr(addr, "tenant_key_id", id3),
					resource.TestCheckResourceAttr(addr, "generation", "2"),
					first.revoked,
					last.enqueue,
					last.readable,
				),
			},
		},
	})
}

func TestAccNamespaceEncryptionNotFound(t *testing.T) {
	ns := accNamespace(t, "cryptnf")
	k, _ := tenantKey(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{ // another tenant's namespace, or one that does not exist, is not found
				Config:      providerBlock(ns) + "resource \"jobbie_namespace_encryption\" \"e\" {\n  namespace = \"nope-none\"\n  " + keyAttr(k) + "\n}\n",
				ExpectError: regexp.MustCompile(`(?s)encryption of namespace nope-none.*404`),
			},
		},
	})
}
