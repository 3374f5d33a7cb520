package layout

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBillingGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	h := hourAt(2026, 11, 5, 13)
	require.Equal(t, []byte("\x1fpro\x0000000000000000000007"), PlanVersion("pro", 7))
	require.Equal(t, []byte("\x1fpro\x00"), PlanVersions("pro"))
	require.Equal(t, []byte("\x20t_x\x002026110513"), TenantPlan("t_x", h))
	require.Equal(t, []byte("\x20t_x\x00"), TenantPlans("t_x"))
	require.Equal(t, []byte("\x21t_x\x002026-11"), Invoice("t_x", h))
	require.Equal(t, []byte("\x21t_x\x00"), Invoices("t_x"))

	name, v, ok := PlanVersionParts(PlanVersion("pro-2", 12))
	require.True(t, ok)
	require.Equal(t, "pro-2", name)
	require.Equal(t, uint64(12), v)
	_, _, ok = PlanVersionParts(TenantPlan("t_x", h))
	require.False(t, ok)
	got, err := TenantPlanHour(TenantPlan("t_x", h))
	require.NoError(t, err)
	require.True(t, got.Equal(h))
}

func TestBillingKeysSort(t *testing.T) {
	t.Parallel()
	want := [][]byte{PlanVersion("a", 2), PlanVersion("a", 10), PlanVersion("a-b", 1), PlanVersion("b", 1)}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, bytes.Compare)
	require.Equal(t, want, got, "a plan's versions sort numerically, plans by name")
	hist := [][]byte{TenantPlan(tidA, hourAt(2026, 1, 31, 23)), TenantPlan(tidA, hourAt(2026, 2, 1, 0)), TenantPlan(tidB, hourAt(2025, 1, 1, 0))}
	require.True(t, slices.IsSortedFunc(hist, bytes.Compare), "a tenant's plan history sorts by hour")
	inv := [][]byte{Invoice(tidA, hourAt(2025, 12, 1, 0)), Invoice(tidA, hourAt(2026, 1, 1, 0)), Invoice(tidB, hourAt(2024, 1, 1, 0))}
	require.True(t, slices.IsSortedFunc(inv, bytes.Compare), "a tenant's invoices sort by month")
}
