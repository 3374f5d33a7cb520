package layout

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	tidA = "t_01hzzzzzzzzzzzzzzzzzzzzzza"
	tidB = "t_01hzzzzzzzzzzzzzzzzzzzzzzb"
)

func TestNoKeyUsesTheReplicaPrefix(t *testing.T) {
	t.Parallel()
	keys := [][]byte{
		RevocationVersion(), ActiveSigningKey(), Tenant(tidA), Tenants(), TenantName("acme"),
		Namespace(tidA, "default"), Namespaces(tidA), Key(tidA, "key_1"), Key("", "key_1"),
		Keys(""), Revoked("key_1"), RevokedKeys(), SigningKey("sk_1"), SigningKeys(), ShardLoad("s1"),
		ShardLoads(), Shard("s1"), Shards(), Rotated("key_1"), RotatedKeys(), KeyUsed(tidA, "key_1"),
		Role(tidA, "support"), Roles(tidA), RolesVersion(tidA), RolesVersions(),
	}
	for _, k := range keys {
		require.NotEqual(t, byte(0x00), k[0], "%q", k)
	}
}

func TestGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	require.Equal(t, []byte("\x12t_x\x00emails"), Namespace("t_x", "emails"))
	require.Equal(t, []byte("\x12t_x\x00"), Namespaces("t_x"))
	require.Equal(t, []byte("\x13\x00key_1"), Key("", "key_1"))
	require.Equal(t, []byte("\x13t_x\x00key_1"), Key("t_x", "key_1"))
	require.Equal(t, []byte("\x01revocation_version"), RevocationVersion())
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 1, 2}, Uint64(258))
	require.Equal(t, []byte("\x16s1"), ShardLoad("s1"))
	require.Equal(t, []byte("\x17s1"), Shard("s1"))
	require.Equal(t, "s1", ShardLoadID(ShardLoad("s1")))
	require.Equal(t, []byte("\x18key_1"), Rotated("key_1"))
	require.Equal(t, []byte("\x19t_x\x00key_1"), KeyUsed("t_x", "key_1"))
	require.Equal(t, []byte("\x1at_x\x00support"), Role("t_x", "support"))
	require.Equal(t, []byte("\x1at_x\x00"), Roles("t_x"))
	require.Equal(t, []byte("\x1bt_x"), RolesVersion("t_x"))
	require.Equal(t, "t_x", RolesVersionTenant(RolesVersion("t_x")))
	require.Equal(t, []byte("\x2ct_x"), SSO("t_x"))
	require.False(t, bytes.HasPrefix(Role("t_xy", "a"), Roles("t_x")), "tenants do not mix")
}

func TestNamespacesSortByNameWithinTenant(t *testing.T) {
	t.Parallel()
	// "a" < "a-b" < "ab" < "b" as strings; their keys must sort the same,
	// and every key of tenant A must sort before every key of tenant B.
	want := [][]byte{
		Namespace(tidA, "a"), Namespace(tidA, "a-b"), Namespace(tidA, "ab"), Namespace(tidA, "b"),
		Namespace(tidB, "a"),
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, bytes.Compare)
	require.Equal(t, want, got)
	for _, k := range want[:4] {
		require.True(t, bytes.HasPrefix(k, Namespaces(tidA)))
		require.False(t, bytes.HasPrefix(k, Namespaces(tidB)))
		require.Equal(t, -1, bytes.Compare(k, PrefixEnd(Namespaces(tidA))))
	}
	require.Equal(t, "a-b", NamespaceName(want[1]))
}

func TestKeysSortByIDAndTenantsDoNotMix(t *testing.T) {
	t.Parallel()
	ids := []string{"key_01a", "key_01b", "key_02"}
	for i := 1; i < len(ids); i++ {
		require.Equal(t, -1, bytes.Compare(Key(tidA, ids[i-1]), Key(tidA, ids[i])))
	}
	require.False(t, bytes.HasPrefix(Key("", "key_1"), Keys(tidA)))
	require.False(t, bytes.HasPrefix(Key(tidA, "key_1"), Keys("")))
	require.True(t, bytes.HasPrefix(Key("", "key_1"), Keys("")))
	require.Equal(t, "key_02", KeyID(Key(tidA, "key_02")))
	require.Equal(t, "key_9", RevokedID(Revoked("key_9")))
}

func TestCountersSortNumerically(t *testing.T) {
	t.Parallel()
	vals := []uint64{0, 1, 255, 256, 1 << 40}
	for i := 1; i < len(vals); i++ {
		require.Equal(t, -1, bytes.Compare(Uint64(vals[i-1]), Uint64(vals[i])))
	}
	require.Equal(t, uint64(1<<40), DecodeUint64(Uint64(1<<40)))
	require.Equal(t, uint64(0), DecodeUint64(nil))
}

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	require.Equal(t, []byte{0x13, 0x01}, PrefixEnd([]byte{0x13, 0x00}))
	require.Equal(t, []byte{0x14}, PrefixEnd([]byte{0x13, 0xff}))
	require.Nil(t, PrefixEnd([]byte{0xff, 0xff}))
}
