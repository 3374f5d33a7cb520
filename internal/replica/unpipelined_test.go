package replica

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// Raft replicates through the transport the node gives it, which must
// offer no pipeline (unpipelined: hashicorp/raft's pipeline can stall a
// follower for good), and must keep the network transport's other
// abilities (pre-vote, closing).
func TestRaftTransportOffersNoPipeline(t *testing.T) {
	var tr raft.Transport = unpipelined{&raft.NetworkTransport{}}
	_, err := tr.AppendEntriesPipeline("n2", "127.0.0.1:1")
	require.ErrorIs(t, err, raft.ErrPipelineReplicationNotSupported)
	_, preVote := tr.(raft.WithPreVote)
	require.True(t, preVote, "pre-vote is kept")
	_, closes := tr.(raft.WithClose)
	require.True(t, closes, "closing is kept")
}
