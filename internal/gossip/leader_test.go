package gossip

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func sm(name, shard, state string, term uint64, leader, leaderHTTP string) Member {
	return Member{Name: name, Addr: name + ":7946", Meta: Meta{
		Role: RoleShard, ShardID: shard, NodeID: name, RaftState: state, Term: term,
		Leader: leader, LeaderHTTP: leaderHTTP, HTTPAddr: name + ":8080",
	}}
}

func TestPickLeader(t *testing.T) {
	gw := Member{Name: "gw", Meta: Meta{Role: RoleGateway, ShardID: "s1", RaftState: StateLeader, Term: 99}}
	cases := []struct {
		name     string
		ms       []Member
		wantOK   bool
		wantHTTP string
		wantName string
		wantTerm uint64
		inferred bool
	}{
		{name: "empty", ms: nil},
		{name: "only followers with no leader known", ms: []Member{
			sm("a", "s1", StateFollower, 3, "", ""), sm("b", "s1", StateCandidate, 4, "", ""),
		}},
		{name: "single claim", ms: []Member{
			sm("a", "s1", StateLeader, 2, "a", "a:8080"), sm("b", "s1", StateFollower, 2, "a", "a:8080"),
		}, wantOK: true, wantName: "a", wantHTTP: "a:8080", wantTerm: 2},
		{name: "stale claim loses to higher term claim", ms: []Member{
			sm("a", "s1", StateLeader, 2, "a", "a:8080"), sm("b", "s1", StateLeader, 3, "b", "b:8080"),
			sm("c", "s1", StateFollower, 2, "a", "a:8080"),
		}, wantOK: true, wantName: "b", wantHTTP: "b:8080", wantTerm: 3},
		{name: "equal term claims go to smallest name", ms: []Member{
			sm("b", "s1", StateLeader, 3, "b", "b:8080"), sm("c", "s1", StateLeader, 3, "c", "c:8080"),
		}, wantOK: true, wantName: "b", wantHTTP: "b:8080", wantTerm: 3},
		{name: "other shards and roles ignored", ms: []Member{
			gw, sm("x", "s2", StateLeader, 50, "x", "x:8080"), sm("a", "s1", StateLeader, 1, "a", "a:8080"),
		}, wantOK: true, wantName: "a", wantHTTP: "a:8080", wantTerm: 1},
		{name: "no claim: majority of highest-term reports", ms: []Member{
			sm("a", "s1", StateFollower, 4, "c", "c:8080"),
			sm("b", "s1", StateFollower, 4, "c", "c:8080"),
			sm("d", "s1", StateFollower, 4, "e", "e:8080"),
			sm("f", "s1", StateFollower, 3, "z", "z:8080"),
			sm("g", "s1", StateFollower, 3, "z", "z:8080"),
			sm("h", "s1", StateFollower, 3, "z", "z:8080"),
		}, wantOK: true, wantName: "", wantHTTP: "c:8080", wantTerm: 4, inferred: true},
		{name: "no claim: reported leader is a member", ms: []Member{
			sm("a", "s1", StateFollower, 5, "b", "b:8080"),
			sm("b", "s1", StateFollower, 4, "x", "x:8080"), // b's own update not here yet
		}, wantOK: true, wantName: "b", wantHTTP: "b:8080", wantTerm: 5, inferred: true},
		{name: "report of newer term beats stale claim", ms: []Member{
			sm("a", "s1", StateLeader, 2, "a", "a:8080"),
			sm("b", "s1", StateFollower, 3, "c", "c:8080"),
		}, wantOK: true, wantName: "", wantHTTP: "c:8080", wantTerm: 3, inferred: true},
		{name: "vote tie goes to smallest address", ms: []Member{
			sm("a", "s1", StateFollower, 5, "q", "q:8080"),
			sm("b", "s1", StateFollower, 5, "p", "p:8080"),
		}, wantOK: true, wantHTTP: "p:8080", wantTerm: 5, inferred: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := pickLeader(tc.ms, "s1")
			require.Equal(t, tc.wantOK, ok)
			if !ok {
				return
			}
			require.Equal(t, tc.wantName, got.Name)
			require.Equal(t, tc.wantHTTP, got.Meta.HTTPAddr)
			require.Equal(t, tc.wantTerm, got.Meta.Term)
			require.Equal(t, tc.inferred, got.Inferred)
			require.Equal(t, StateLeader, got.Meta.RaftState)
			require.Equal(t, "s1", got.Meta.ShardID)
		})
	}
}

func TestPickLeaderInferredCarriesLeaderID(t *testing.T) {
	got, ok := pickLeader([]Member{sm("a", "s1", StateFollower, 7, "node-c", "c:8080")}, "s1")
	require.True(t, ok)
	require.True(t, got.Inferred)
	require.Equal(t, "node-c", got.Meta.NodeID)
	require.Equal(t, "node-c", got.Meta.Leader)
	require.Equal(t, "c:8080", got.Meta.LeaderHTTP)
}
