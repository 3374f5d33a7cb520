package leader

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/service"
)

// Each round steps one operation per tenant: the first listed (the oldest
// of its first namespace), so a tenant with many operations, or many
// namespaces, still takes one step a round like a tenant with one.
func TestBulkTurnsOnePerTenant(t *testing.T) {
	running := []service.BulkOpRef{
		{NS: "t_a/big", ID: "a1"}, {NS: "t_a/big", ID: "a2"}, {NS: "t_a/other", ID: "a3"},
		{NS: "t_b/small", ID: "b1"}, {NS: "t_b/small", ID: "b2"},
		{NS: "t_c/x", ID: "c1"},
	}
	require.Equal(t, []service.BulkOpRef{{NS: "t_a/big", ID: "a1"}, {NS: "t_b/small", ID: "b1"}, {NS: "t_c/x", ID: "c1"}},
		bulkTurns(running))
	require.Empty(t, bulkTurns(nil))
}
