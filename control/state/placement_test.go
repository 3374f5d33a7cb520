package state

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLegacyCreateCommandsKeepTheirRule(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	// A registered shard with room, and a command from before the registry
	// (no static_capacity): it still places among its own shards only, by
	// fewest namespaces, so replaying it gives the same answer it gave.
	apply(t, b, applyRegisterShard, RegisterShardCmd{Shard: registration("s0", 100, "127.0.0.1:1")})
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s2", "s1"}}})
	require.Equal(t, "s1", mustNamespace(t, b, tidA, "default").ShardID)

	out, _ := apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: "new", Placement: Placement{Shards: []string{"s2", "s1"}, StaticCapacity: 10}})
	require.Equal(t, "s0", out.(Namespace).ShardID, "the new rule sees the registered shard")
}

func mustNamespace(t *testing.T, b *applyBundle, tid, name string) Namespace {
	t.Helper()
	ns, err := LoadNamespace(b.db, tid, name)
	require.NoError(t, err)
	return ns
}

func registration(id string, capacity uint64, addrs ...string) ShardRegistration {
	reg := ShardRegistration{ShardID: id, Capacity: capacity, Version: "test"}
	for i, a := range addrs {
		reg.Members = append(reg.Members, ShardMember{NodeID: id + "-n" + string(rune('1'+i)), HTTPAddr: a, RaftAddr: "127.0.0.1:1" + string(rune('0'+i))})
	}
	return reg
}
