package limits

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/wire"
)

func i64p(v int64) *int64 { return &v }

func TestShardHeadersOf(t *testing.T) {
	t.Parallel()
	require.Same(t, admitted.DefaultShardHeaders, headersOf(nil))
	for _, tc := range []struct {
		weight     int64
		pending    *int64
		wantWeight string
		wantLimit  string
	}{
		{0, nil, "1", ""},
		{-3, nil, "1", ""},
		{1, nil, "1", ""},
		{250, nil, "250", ""},
		{1000, nil, "1000", ""},
		{1001, nil, "1000", ""},
		{0, i64p(10), "1", "10"},
		{9, i64p(1), "9", "1"},
	} {
		h := headersOf(&wire.Plan{Weight: tc.weight, Limits: wire.PlanLimits{MaxPendingJobs: tc.pending}})
		require.Equal(t, tc.wantWeight, string(h.Weight), "weight %d", tc.weight)
		require.Equal(t, tc.wantLimit, string(h.MaxPending), "weight %d", tc.weight)
		require.Equal(t, tc.pending != nil, h.MaxPending != nil)
		require.True(t, headersEqual(h, headersOf(&wire.Plan{Weight: tc.weight, Limits: wire.PlanLimits{MaxPendingJobs: tc.pending}})))
		require.Equal(t, "24,100000", string(h.EventRetention), "a known plan's retention, the defaults filled in")
	}
	require.Nil(t, admitted.DefaultShardHeaders.EventRetention, "an unknown plan tells the shard nothing of retention")
	small := headersOf(&wire.Plan{Limits: wire.PlanLimits{EventRetentionHours: i64p(2), EventRetentionEvents: i64p(5000)}})
	require.Equal(t, "2,5000", string(small.EventRetention))
	require.False(t, headersEqual(small, headersOf(&wire.Plan{})))
	require.False(t, headersEqual(headersOf(&wire.Plan{Weight: 2}), admitted.DefaultShardHeaders))
	require.False(t, headersEqual(headersOf(&wire.Plan{Limits: wire.PlanLimits{MaxPendingJobs: i64p(1)}}), admitted.DefaultShardHeaders))
}
