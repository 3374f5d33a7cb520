package engine

import (
	"encoding/json"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// chainIndex lists chain's index as step → job id.
func (f *fsmBundle) chainIndex(chain string) map[uint16]string {
	f.t.Helper()
	p := keys.ChainSteps(testNS, chain)
	it, err := f.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	require.NoError(f.t, err)
	defer it.Close()
	out := map[uint16]string{}
	for ok := it.First(); ok; ok = it.Next() {
		step, id, err := keys.StepID(it.Key())
		require.NoError(f.t, err)
		out[step] = id
	}
	return out
}

// A chain enqueued with FlowChainIndexed has each step's job in its index,
// the next step's as it is spawned, until the job is removed; a chain of
// an older log (no flag) writes nothing, so that log replays as it first
// applied.
func TestApplyChainIndex(t *testing.T) {
	spec, err := json.Marshal(wire.ChainSpec{Steps: []wire.StepSpec{{Queue: "s1"}, {Queue: "s2"}, {Queue: "s3"}}})
	require.NoError(t, err)
	const indexed, older = "chain_01HX0000000000000000000001", "chain_01HX0000000000000000000002"

	f := setupFSM(t)
	s1 := f.enqueue(&job.Job{Queue: "s1", ChainID: indexed, Chain: spec, Flow: job.FlowChainIndexed})
	require.Equal(t, map[uint16]string{0: s1}, f.chainIndex(indexed))
	f.finish("s1", `{}`, "")
	s2 := f.pendingIn("s2")
	require.Len(t, s2, 1)
	require.True(t, s2[0].Flow.Has(job.FlowChainIndexed), "the next step carries the flag")
	require.Equal(t, map[uint16]string{0: s1, 1: s2[0].ID}, f.chainIndex(indexed))
	f.apply(JobDiscard.Type, &JobOpCmd{NS: testNS, ID: s1})
	require.Equal(t, map[uint16]string{1: s2[0].ID}, f.chainIndex(indexed), "a removed job leaves the index")

	g := setupFSM(t)
	g.enqueue(&job.Job{Queue: "s1", ChainID: older, Chain: spec})
	g.finish("s1", `{}`, "")
	require.Len(t, g.pendingIn("s2"), 1)
	require.Empty(t, g.chainIndex(older))
	require.False(t, g.pendingIn("s2")[0].Flow.Has(job.FlowChainIndexed))
}
