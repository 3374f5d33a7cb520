package wire

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A step is whole hours or days, an hour to 31 days, written back in
// days when it is whole days; anything else is refused naming step.
func TestAIStepIsWholeHours(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"": 0, "1h": time.Hour, "6h": 6 * time.Hour, "24h": 24 * time.Hour,
		"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "31d": 31 * 24 * time.Hour, "744h": 744 * time.Hour} {
		got, err := ParseAIStep(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"0h", "0d", "h", "1", "90m", "1.5h", "-1h", "+1h", "01h", "1w", "32d", "745h", "1H", "1h ", "99999h", "P1D"} {
		_, err := ParseAIStep(in)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "%q: %v", in, err)
		require.Equal(t, "step", fe.Field, in)
	}
	require.Equal(t, "1h", FormatAIStep(time.Hour))
	require.Equal(t, "36h", FormatAIStep(36*time.Hour))
	require.Equal(t, "1d", FormatAIStep(24*time.Hour))
	require.Equal(t, "7d", FormatAIStep(7*24*time.Hour))
}

// Buckets cover the range, the last cut short, and there are at most
// MaxAIUsageBuckets of them.
func TestAIUsageStepsBounded(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	n, err := AIUsageSteps(from, from.Add(24*time.Hour), time.Hour)
	require.NoError(t, err)
	require.Equal(t, 24, n)
	n, err = AIUsageSteps(from, from.Add(25*time.Hour), 24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, 2, n, "a last, shorter bucket")
	n, err = AIUsageSteps(from, from.Add(MaxAIUsageBuckets*time.Hour), time.Hour)
	require.NoError(t, err)
	require.Equal(t, MaxAIUsageBuckets, n)
	_, err = AIUsageSteps(from, from.Add((MaxAIUsageBuckets+1)*time.Hour), time.Hour)
	var fe *FieldError
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, "step", fe.Field)
}
