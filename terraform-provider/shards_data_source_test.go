package provider

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

func shardAttrs(t *testing.T, sh client.OwnedShard) map[string]attr.Value {
	t.Helper()
	obj, diags := shardObject(context.Background(), sh)
	if diags.HasError() {
		t.Fatalf("shardObject: %v", diags)
	}
	if !obj.Type(context.Background()).Equal(shardObjectType) {
		t.Fatalf("type %v, want %v", obj.Type(context.Background()), shardObjectType)
	}
	return obj.Attributes()
}

func TestShardObjectHealthKnown(t *testing.T) {
	a := shardAttrs(t, client.OwnedShard{
		ID: "sh_1", Name: "dc", Nodes: []string{"n1", "n2"}, ExpectedNodes: 2, Connected: []string{"n1"},
		CreatedAt: time.Unix(0, 0).UTC(),
		Health: &wire.ClusterHealth{ShardID: "sh_1", LeaderID: "n1", Healthy: true, Nodes: []wire.ClusterNode{
			{ID: "n1", Role: wire.NodeLeader, Status: wire.NodeHealthy},
			{ID: "n2", Role: wire.NodeFollower, Status: wire.NodeUnreachable},
		}},
	})
	if !a["healthy"].Equal(types.BoolValue(true)) {
		t.Errorf("healthy = %v, want true", a["healthy"])
	}
	if !a["leader_id"].Equal(types.StringValue("n1")) {
		t.Errorf("leader_id = %v, want n1", a["leader_id"])
	}
	nodes := a["node_health"].(types.List).Elements()
	want := [][3]string{{"n1", "leader", "healthy"}, {"n2", "follower", "unreachable"}}
	if len(nodes) != len(want) {
		t.Fatalf("node_health has %d entries, want %d", len(nodes), len(want))
	}
	for i, w := range want {
		na := nodes[i].(types.Object).Attributes()
		for j, k := range []string{"id", "role", "status"} {
			if !na[k].Equal(types.StringValue(w[j])) {
				t.Errorf("node_health[%d].%s = %v, want %s", i, k, na[k], w[j])
			}
		}
	}
	if !a["connected"].Equal(types.ListValueMust(types.StringType, []attr.Value{types.StringValue("n1")})) {
		t.Errorf("connected = %v", a["connected"])
	}
}

func TestShardObjectHealthUnknown(t *testing.T) {
	a := shardAttrs(t, client.OwnedShard{ID: "sh_1", Name: "dc", ExpectedNodes: 1, CreatedAt: time.Unix(0, 0).UTC()})
	if !a["healthy"].IsNull() || !a["leader_id"].IsNull() {
		t.Errorf("healthy = %v, leader_id = %v, want both null", a["healthy"], a["leader_id"])
	}
	if l := a["node_health"].(types.List); l.IsNull() || len(l.Elements()) != 0 {
		t.Errorf("node_health = %v, want an empty list", l)
	}
	for _, k := range []string{"nodes", "connected", "namespaces"} {
		if l := a[k].(types.List); l.IsNull() || len(l.Elements()) != 0 {
			t.Errorf("%s = %v, want an empty list", k, l)
		}
	}
}

// A shard whose group knows no leader: healthy is false, leader_id null.
func TestShardObjectHealthNoLeader(t *testing.T) {
	a := shardAttrs(t, client.OwnedShard{ID: "sh_1", Name: "dc", ExpectedNodes: 1, Connected: []string{"n1"},
		Health: &wire.ClusterHealth{ShardID: "sh_1", Nodes: []wire.ClusterNode{
			{ID: "n1", Role: wire.NodeFollower, Status: wire.NodeHealthy}}}})
	if !a["healthy"].Equal(types.BoolValue(false)) || !a["leader_id"].IsNull() {
		t.Errorf("healthy = %v, leader_id = %v, want false and null", a["healthy"], a["leader_id"])
	}
	if n := len(a["node_health"].(types.List).Elements()); n != 1 {
		t.Errorf("node_health has %d entries, want 1", n)
	}
}
