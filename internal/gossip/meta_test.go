package gossip

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMetaRoundTripIsCompact(t *testing.T) {
	m := Meta{
		Role: RoleShard, ShardID: "shard-a", NodeID: "shard-a-2", RaftState: StateLeader, Term: 12,
		Leader: "shard-a-2", LeaderHTTP: "10.1.2.3:8080", HTTPAddr: "10.1.2.3:8080",
		RaftAddr: "10.1.2.3:7000", Version: "v1.4.2", Load: 42,
	}
	b, err := m.Encode()
	require.NoError(t, err)
	require.Less(t, len(b), 256, "typical meta leaves room: %s", b)
	require.Contains(t, string(b), `"rs":"leader"`)
	got, err := DecodeMeta(b)
	require.NoError(t, err)
	require.Equal(t, m, got)

	b, err = Meta{Role: RoleGateway}.Encode()
	require.NoError(t, err)
	require.Equal(t, `{"r":"gateway"}`, string(b))

	_, err = DecodeMeta(nil)
	require.Error(t, err)
	_, err = DecodeMeta([]byte("nope"))
	require.Error(t, err)
}

func TestMetaValidate(t *testing.T) {
	require.ErrorContains(t, Meta{Role: RoleShard}.Validate(), "ShardID")
	require.ErrorContains(t, Meta{}.Validate(), "unknown role")
	require.ErrorContains(t, Meta{Role: RoleControl, RaftState: "Follower"}.Validate(), "unknown raft state")
	require.NoError(t, Meta{Role: RoleControl, RaftState: StateCandidate}.Validate())

	fits := Meta{Role: RoleGateway}
	base, _ := fits.Encode()
	fits.Version = strings.Repeat("v", MaxMetaSize-len(base)-len(`,"v":""`))
	b, err := fits.Encode()
	require.NoError(t, err)
	require.Len(t, b, MaxMetaSize)
	fits.Version += "v"
	_, err = fits.Encode()
	require.ErrorIs(t, err, ErrMetaTooLarge)
	require.ErrorContains(t, err, "513 bytes")
}

func TestNormalizeRaftState(t *testing.T) {
	for in, want := range map[string]string{
		"Leader": StateLeader, "Follower": StateFollower, "Candidate": StateCandidate,
		"Shutdown": "", "": "", "leader": StateLeader,
	} {
		require.Equal(t, want, NormalizeRaftState(in), in)
	}
}

func TestResolveJoin(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"10.0.0.1:7000", []string{"10.0.0.1:7000"}},
		{"10.0.0.1:7000, node-b:7001,10.0.0.1:7000", []string{"10.0.0.1:7000", "node-b:7001"}},
		{"node-c", []string{"node-c:7946"}},
		{"[::1]:9000,::2", []string{"[::1]:9000", "[::2]:7946"}},
	} {
		got, err := ResolveJoin(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{":7000", "host:", "host:0", "host:http", "a:b:c", "dns:", "dns::80", "dns:localhost:x", "dns:localhost:70000"} {
		_, err := ResolveJoin(bad)
		require.Error(t, err, bad)
	}

	got, err := ResolveJoin("dns:localhost:12345, 10.0.0.9:1")
	require.NoError(t, err)
	require.Contains(t, got, "127.0.0.1:12345")
	require.Equal(t, "10.0.0.9:1", got[len(got)-1])
	got, err = ResolveJoin("dns:localhost")
	require.NoError(t, err)
	require.Contains(t, got, "127.0.0.1:7946")

	_, err = ResolveJoin("dns:no-such-host.invalid")
	require.ErrorContains(t, err, "no-such-host.invalid")

	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, err = ResolveJoinContext(ctx, "dns:example.invalid")
	require.Error(t, err)
}
