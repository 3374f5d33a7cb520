package provider_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

// startShardNode runs a one-node self-hosted shard (`jobbie shard
// --join-token`) joined to the acceptance tests' jobbie dev with token,
// until the test ends, and waits for its tunnel to be up.
func startShardNode(t *testing.T, token, shardID string) {
	t.Helper()
	dir := t.TempDir()
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	gossipKey := filepath.Join(dir, "gossip.key")
	if err := os.WriteFile(gossipKey, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "node.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jobbieBin, "shard", "--node-id", "n1", "--data-dir", filepath.Join(dir, "data"), "--bootstrap",
		"--http", ports[0], "--raft", ports[1], "--gossip", ports[2], "--gossip-key-file", gossipKey,
		"--join-token", token, "--control-url", controlURL, "--ca-file", filepath.Join(devDir, "pki", "ca.crt"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		sh, err := ownedShard(t, shardID)
		if err == nil && sh != nil && slices.Equal(sh.Connected, []string{"n1"}) {
			return
		}
		select {
		case <-exited:
			t.Fatalf("the self-hosted node exited: %s", tail(logPath))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the self-hosted node's tunnel is not up after 90s (shard %+v, %v): %s", sh, err, tail(logPath))
		}
	}
}

// waitShardHealthy waits until the gateway's listing carries the shard's
// health with a leader: a node elects itself a little after its tunnel is
// up, and the gateway asks it only per listing.
func waitShardHealthy(t *testing.T, shardID string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sh, err := ownedShard(t, shardID)
		if err == nil && sh != nil && sh.Health != nil && sh.Health.Healthy && sh.Health.LeaderID != "" {
			return
		}
		if time.Now().After(deadline) {
			var h any
			if sh != nil {
				h = sh.Health
			}
			t.Fatalf("shard %s not healthy with a leader after 60s (health %+v, %v)", shardID, h, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A namespace on the tenant's self-hosted shard: placed there while no
// node has joined (a retention must wait for one; the API refuses it
// before creating anything), and deleted then at once; served through the
// node's tunnel once it joins; the shard is not revoked while a namespace
// is on it; the shard is read back, so an existing namespace on it
// imported into a configuration that names it is kept as it is, and a
// hosted one imported there is planned for replacement; destroy removes
// the namespaces, then revokes the shard.
func TestAccNamespaceOnShard(t *testing.T) {
	accPreCheck(t)
	seq := fmt.Sprintf("%d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	onprem, kept, outside, stray := "onprem-"+seq, "kept-"+seq, "outside-"+seq, "stray-"+seq
	early, hosted := "early-"+seq, "hosted-"+seq
	const tok, ns = "jobbie_shard_join_token.dc", "jobbie_namespace.onprem"
	var made shardIDs
	var token string
	config := func(extra ...string) string {
		return fmt.Sprintf(`
resource "jobbie_shard_join_token" "dc" {
  name = "dc %[1]s"
}
resource "jobbie_namespace" "onprem" {
  name          = %[2]q
  description   = "on premises"
  shard         = jobbie_shard_join_token.dc.shard_id
  force_destroy = true
}
`, seq, onprem) + strings.Join(extra, "\n")
	}
	withRetention := fmt.Sprintf(`
resource "jobbie_namespace" "kept" {
  name      = %q
  retention = "2h"
  shard     = jobbie_shard_join_token.dc.shard_id
}
`, kept)
	listed := `
data "jobbie_shards" "dc" {
  name       = jobbie_shard_join_token.dc.name
  depends_on = [jobbie_namespace.onprem, jobbie_namespace.kept]
}
`
	placedEarly := fmt.Sprintf(`
resource "jobbie_namespace" "early" {
  name  = %q
  shard = jobbie_shard_join_token.dc.shard_id
}
`, early)
	// importOnShard imports namespace name as jobbie_namespace.<label>,
	// declared on the shard.
	importOnShard := func(label, name string) string {
		return fmt.Sprintf(`
import {
  to = jobbie_namespace.%[1]s
  id = %[2]q
}
resource "jobbie_namespace" "%[1]s" {
  name  = %[2]q
  shard = jobbie_shard_join_token.dc.shard_id
}
`, label, name)
	}
	importedHosted, imported := importOnShard("hosted", hosted), importOnShard("outside", outside)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(s *terraform.State) error {
			for _, name := range []string{onprem, kept, outside, stray, early} {
				if _, err := api().GetNamespace(ctx(nil), name); !client.IsNotFound(err) {
					return fmt.Errorf("namespace %s after destroy: %v", name, err)
				}
			}
			return made.allRevoked(s)
		},
		Steps: []resource.TestStep{
			{ // no node yet: the namespaces are placed (with a warning), and the shard holds them
				Config: config(placedEarly),
				Check: resource.ComposeAggregateTestCheckFunc(
					made.record(tok),
					resource.TestCheckResourceAttrWith(tok, "token", func(v string) error { token = v; return nil }),
					resource.TestCheckResourceAttrPair(ns, "shard", tok, "shard_id"),
					resource.TestCheckResourceAttrPair("jobbie_namespace.early", "shard", tok, "shard_id"),
					resource.TestCheckResourceAttr(ns, "description", "on premises"),
					func(*terraform.State) error {
						if err := api().RevokeShard(ctx(t), made.last()); !client.IsConflict(err) {
							return fmt.Errorf("revoke the shard holding %s: %v, want 409", onprem, err)
						}
						return nil
					},
				),
			},
			{ // still no node: a namespace there holds nothing, and is deleted at once
				Config: config(),
				Check: func(*terraform.State) error {
					if _, err := api().GetNamespace(ctx(t), early); !client.IsNotFound(err) {
						return fmt.Errorf("namespace %s after its destroy: %v", early, err)
					}
					return nil
				},
			},
			{ // a retention needs a node of the shard: the API refuses it before anything is made
				Config:      config(withRetention),
				ExpectError: regexp.MustCompile(`(?s)The shard has no node yet.*no\s+node\s+of\s+shard.*has\s+joined\s+yet.*leave\s+retention\s+out`),
			},
			{ // a node joins: the namespace serves through its tunnel, the retention is taken
				PreConfig: func() {
					if _, err := api().GetNamespace(ctx(t), kept); !client.IsNotFound(err) {
						t.Fatalf("namespace %s after a refused create: %v", kept, err)
					}
					startShardNode(t, token, made.last())
					waitShardHealthy(t, made.last())
				},
				Config: config(withRetention, listed),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("jobbie_namespace.kept", "retention", "2h"),
					resource.TestCheckResourceAttrPair("jobbie_namespace.kept", "shard", tok, "shard_id"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.#", "1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.nodes.#", "1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.nodes.0", "n1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.connected.0", "n1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.expected_nodes", "1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.healthy", "true"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.leader_id", "n1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.node_health.#", "1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.node_health.0.id", "n1"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.node_health.0.role", "leader"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.node_health.0.status", "healthy"),
					resource.TestCheckNoResourceAttr("data.jobbie_shards.dc", "shards.0.token_expires_at"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.namespaces.#", "2"),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.namespaces.0", kept),
					resource.TestCheckResourceAttr("data.jobbie_shards.dc", "shards.0.namespaces.1", onprem),
					func(*terraform.State) error {
						c := api().WithNamespace(onprem)
						deadline := time.Now().Add(30 * time.Second)
						for {
							_, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "local"})
							if err == nil {
								return nil
							}
							if time.Now().After(deadline) {
								return fmt.Errorf("enqueue into %s through the shard's tunnel: %v", onprem, err)
							}
							time.Sleep(200 * time.Millisecond)
						}
					},
				),
			},
			{ // a hosted namespace imported into a configuration naming the shard: read back, planned for replacement
				PreConfig: func() {
					if _, err := api().CreateNamespace(ctx(t), hosted); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = api().DeleteNamespace(ctx(nil), hosted, true) })
				},
				Config:             config(withRetention, listed, importedHosted),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("jobbie_namespace.hosted", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
			{ // made outside Terraform on the shard, then imported: its shard is read back, nothing changes
				PreConfig: func() {
					if _, err := api().CreateNamespaceOn(ctx(t), outside, made.last()); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(withRetention, listed, imported),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("jobbie_namespace.outside", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(ns, plancheck.ResourceActionNoop),
				}},
				Check: resource.TestCheckResourceAttrPair("jobbie_namespace.outside", "shard", tok, "shard_id"),
			},
			{ // another token means another shard: the namespaces on the old one are replaced with it
				Config:             strings.Replace(config(withRetention, listed), `name = "dc `, "nodes = 3\n  name = \"dc ", 1),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tok, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(ns, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("jobbie_namespace.kept", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
			{ // leaving the shard replaces the namespace (a new one, on a hosted shard)
				Config: config(withRetention, listed, strings.Replace(imported, "shard = jobbie_shard_join_token.dc.shard_id", "", 1)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("jobbie_namespace.outside", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.TestCheckNoResourceAttr("jobbie_namespace.outside", "shard"),
			},
			{ // a namespace Terraform does not manage keeps the shard from being revoked
				PreConfig: func() {
					if _, err := api().CreateNamespaceOn(ctx(t), stray, made.last()); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config(withRetention, listed),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)still holds namespaces.*holds\s+1\s+namespaces.*Destroy\s+those\s+namespaces\s+first`),
			},
			{ // once it is gone, the final destroy revokes the shard
				PreConfig: func() {
					if err := api().DeleteNamespace(ctx(t), stray, false); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(withRetention, listed),
				Check:  resource.TestCheckResourceAttrPair("jobbie_namespace.kept", "shard", tok, "shard_id"),
			},
		},
	})
}

// A shard that is not the tenant's: refused at apply with the reason; an
// id that cannot be one, at plan time.
func TestAccNamespaceOnUnknownShard(t *testing.T) {
	accPreCheck(t)
	name := fmt.Sprintf("nowhere-%d-%d", time.Now().UnixNano()%1e6, nsSeq.Add(1))
	cfg := func(shard string) string {
		return fmt.Sprintf("resource \"jobbie_namespace\" \"ns\" {\n  name  = %q\n  shard = %q\n}\n", name, shard)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: cfg("sh_01nosuchshard"), ExpectError: regexp.MustCompile(`(?s)Self-hosted shard not found.*shard\s+"sh_01nosuchshard"\s+not\s+found.*jobbie_shards`)},
			{Config: cfg("no such/shard"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid shard id.*is not a shard id`)},
		},
	})
	if _, err := api().GetNamespace(ctx(t), name); !client.IsNotFound(err) {
		t.Errorf("namespace %s after a refused create: %v", name, err)
	}
}
