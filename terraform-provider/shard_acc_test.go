package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	provider "github.com/jobbie/jobbie/terraform-provider"
)

// tokenConfig declares a join token with the arguments args (HCL lines).
func tokenConfig(args ...string) string {
	return "resource \"jobbie_shard_join_token\" \"dc\" {\n  " + strings.Join(args, "\n  ") + "\n}\n"
}

// ownedShard is the tenant's shard id as the API lists it, nil if none.
func ownedShard(t *testing.T, id string) (*client.OwnedShard, error) {
	shards, err := api().Shards(ctx(t))
	if err != nil {
		return nil, err
	}
	return provider.ShardByID(shards, id), nil
}

// shardIDs records the shard ids a test's steps made, to check each was
// revoked.
type shardIDs struct {
	mu  sync.Mutex
	ids []string
}

// record is a check that keeps the resource's shard_id.
func (s *shardIDs) record(addr string) resource.TestCheckFunc {
	return resource.TestCheckResourceAttrWith(addr, "shard_id", func(v string) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.ids) == 0 || s.ids[len(s.ids)-1] != v {
			s.ids = append(s.ids, v)
		}
		return nil
	})
}

func (s *shardIDs) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return ""
	}
	return s.ids[len(s.ids)-1]
}

// allRevoked is a CheckDestroy: none of the shards is listed any more.
func (s *shardIDs) allRevoked(*terraform.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return fmt.Errorf("no shard was recorded")
	}
	for _, id := range s.ids {
		sh, err := ownedShard(nil, id)
		if err != nil {
			return err
		}
		if sh != nil {
			return fmt.Errorf("shard %s is still listed after destroy: %+v", id, sh)
		}
	}
	return nil
}

// The token's lifecycle is its shard's: minted with its attributes and
// listed by the API; a respelled duration is no change; revoked outside
// Terraform, it is made again; a changed argument revokes the old shard
// and mints a new one; destroy revokes the shard.
func TestAccShardJoinToken(t *testing.T) {
	accPreCheck(t)
	name := fmt.Sprintf("dc %d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	const addr = "jobbie_shard_join_token.dc"
	var made shardIDs
	listed := fmt.Sprintf(`
data "jobbie_shards" "dc" {
  name       = %q
  depends_on = [jobbie_shard_join_token.dc]
}
`, name)
	before := time.Now()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             made.allRevoked,
		Steps: []resource.TestStep{
			{
				Config: tokenConfig(fmt.Sprintf("name = %q", name), "nodes = 3", `expires_in = "30m"`) + listed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
					plancheck.ExpectUnknownValue(addr, tfjsonpath.New("token")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectSensitiveValue(addr, tfjsonpath.New("token")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					made.record(addr),
					resource.TestMatchResourceAttr(addr, "shard_id", regexp.MustCompile(`^sh_`)),
					resource.TestCheckResourceAttrPair(addr, "id", addr, "shard_id"),
					resource.TestMatchResourceAttr(addr, "token", regexp.MustCompile(`^jst_[A-Za-z0-9_-]{40,}$`)),
					resource.TestCheckResourceAttr(addr, "nodes", "3"),
					resource.TestCheckResourceAttrWith(addr, "expires_at", func(v string) error {
						at, err := time.Parse(time.RFC3339Nano, v)
						if err != nil {
							return err
						}
						if lo, hi := before.Add(30*time.Minute-time.Minute), time.Now().Add(30*time.Minute+time.Minute); at.Before(lo) || at.After(hi) {
							return fmt.Errorf("expires_at %s, want about 30m from now (%s to %s)", at, lo, hi)
						}
						return nil
					}),
					func(*terraform.State) error { // the API lists it, joined by no node yet
						sh, err := ownedShard(t, made.last())
						if err != nil || sh == nil || sh.Name != name || len(sh.Nodes) != 0 {
							return fmt.Errorf("GET /api/v1/shards: %+v, %v; want %s named %q with no nodes", sh, err, made.last(), name)
						}
						return nil
					},
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.#", "1"),
					resource.TestCheckResourceAttrPair("data.jobbie_shards.dc", "shards.0.id", addr, "shard_id"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.name", name),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.nodes.#", "0"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.connected.#", "0"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.expected_nodes", "3"),
					resource.TestCheckResourceAttrPair("data.jobbie_shards.dc", "shards.0.token_expires_at", addr, "expires_at"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.namespaces.#", "0"),
					resource.TestCheckResourceAttrSet("data.jobbie_shards.dc", "shards.0.created_at"),
				),
			},
			{ // the same duration, spelled otherwise: nothing to do
				Config: tokenConfig(fmt.Sprintf("name = %q", name), "nodes = 3", `expires_in = "1800s"`) + listed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				}},
			},
			{ // revoked outside Terraform: gone from the state, planned again
				PreConfig: func() {
					if err := api().RevokeShard(ctx(t), made.last()); err != nil {
						t.Fatal(err)
					}
				},
				Config: tokenConfig(fmt.Sprintf("name = %q", name), "nodes = 3", `expires_in = "30m"`) + listed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					made.record(addr),
					func(*terraform.State) error {
						if len(made.ids) != 2 || made.ids[0] == made.ids[1] {
							return fmt.Errorf("shards %v: want a new one", made.ids)
						}
						return nil
					},
				),
			},
			{ // another size: the shard is replaced, the old one revoked
				Config: tokenConfig(fmt.Sprintf("name = %q", name), `expires_in = "30m"`) + listed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "nodes", "1"),
					func(*terraform.State) error {
						old := made.last()
						if sh, err := ownedShard(t, old); err != nil || sh != nil {
							return fmt.Errorf("replaced shard %s: %+v, %v; want it revoked", old, sh, err)
						}
						return nil
					},
					made.record(addr),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.#", "1"),
					resource.TestCheckResourceAttrPair("data.jobbie_shards.dc", "shards.0.id", addr, "shard_id"),
				),
			},
		},
	})
}

// Arguments the API would refuse, or that make no working shard, fail at
// plan time with the reason; nothing is minted.
func TestAccShardJoinTokenValidation(t *testing.T) {
	accPreCheck(t)
	name := fmt.Sprintf("bad-%d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	bad := func(arg, want string) resource.TestStep {
		return resource.TestStep{
			Config:      tokenConfig(fmt.Sprintf("name = %q", name), arg),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			bad("nodes = 2", `(?s)Invalid number of shard nodes.*nodes must be 1, 3 or 5, not 2.*majority`),
			bad("nodes = 4", `nodes must be 1, 3 or 5, not 4`),
			bad("nodes = 7", `nodes must be 1, 3 or 5, not 7`),
			bad("nodes = 0", `nodes must be 1, 3 or 5, not 0`),
			bad(`expires_in = "30s"`, `(?s)Invalid duration between 1m0s and 24h0m0s.*"30s" is shorter than 1m0s`),
			bad(`expires_in = "25h"`, `"25h" is longer than 24h0m0s`),
			bad(`expires_in = "soon"`, `(?s)"soon" is not a duration like "30s", "5m" or "1h30m"`),
			{
				Config:      tokenConfig(`name = " padded"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`must not start or end with spaces`),
			},
			{
				Config:      tokenConfig(fmt.Sprintf("name = %q", strings.Repeat("x", 101))),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`a shard name is 1-100 bytes`),
			},
		},
	})
	shards, err := api().Shards(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		if sh.Name == name {
			t.Errorf("a refused configuration minted shard %+v", sh)
		}
	}
}

// Only an owner key mints tokens (and revokes shards); any key that may
// read namespaces lists them.
func TestAccShardJoinTokenForbidden(t *testing.T) {
	ns := accNamespace(t, "shardkeys")
	keys := map[string]string{}
	for _, role := range []tenancy.Role{tenancy.RoleViewer, tenancy.RoleDeveloper, tenancy.RoleAdmin} {
		k, err := api().CreateKey(ctx(t), client.CreateKeyRequest{Name: string(role), Role: role, Namespaces: []string{ns}})
		if err != nil {
			t.Fatal(err)
		}
		keys[string(role)] = k.Token
	}
	withKey := func(role, body string) string {
		return fmt.Sprintf("provider \"jobbie\" {\n  api_key   = %q\n  namespace = %q\n}\n", keys[role], ns) + body
	}
	name := fmt.Sprintf("nope-%d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	mint := tokenConfig(fmt.Sprintf("name = %q", name))
	forbidden := regexp.MustCompile(`(?s)Could not mint a join token for shard.*403 forbidden.*Only\s+a\s+key\s+of\s+role\s+owner`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: withKey("viewer", mint), ExpectError: forbidden},
			{Config: withKey("developer", mint), ExpectError: forbidden},
			{ // an admin key may manage keys, but not mint shards
				Config:      withKey("admin", mint),
				ExpectError: regexp.MustCompile(`(?s)only an owner key\s+may\s+mint shard join tokens.*403 forbidden.*Only\s+a\s+key\s+of\s+role\s+owner`),
			},
			{
				Config: withKey("viewer", `data "jobbie_shards" "all" {}`),
				Check:  resource.TestCheckResourceAttrSet("data.jobbie_shards.all", "shards.#"),
			},
		},
	})
	shards, err := api().Shards(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		if sh.Name == name {
			t.Errorf("a refused key minted shard %+v", sh)
		}
	}
}
