package wire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCostUSDIsExact(t *testing.T) {
	t.Parallel()
	for s, n := range map[string]int64{"0": 0, "0.1": 100_000_000, "3": 3_000_000_000, "0.000000001": 1, "12.50": 12_500_000_000,
		"1000000": 1_000_000 * AICostScale} {
		got, err := ParseCostUSD(s)
		require.NoError(t, err, s)
		require.Equal(t, n, got, s)
	}
	require.Equal(t, "0.3", FormatCostUSD(100_000_000+200_000_000), "no float sum: 0.1 + 0.2")
	require.Equal(t, "12.5", FormatCostUSD(12_500_000_000))
	require.Equal(t, "0.000000001", FormatCostUSD(1))
	require.Equal(t, "0", FormatCostUSD(0))
	for _, bad := range []string{"", ".5", "5.", "-1", "1e3", "0.0000000001", "1.2.3", "abc", " 1", "12345678901"} {
		_, err := ParseCostUSD(bad)
		require.Error(t, err, bad)
	}
}

func TestCheckAIUsageNamesTheField(t *testing.T) {
	t.Parallel()
	for field, u := range map[string]AIUsage{
		"acks[1].usage.cost_usd":           {CostUSD: "1000000.000000001"},
		"acks[1].usage.input_tokens":       {InputTokens: -1},
		"acks[1].usage.cache_write_tokens": {CacheWriteTokens: MaxAITokens + 1},
		"acks[1].usage.model":              {Model: "a\nb"},
		"acks[1].usage.provider":           {Provider: string(make([]byte, MaxAINameBytes+1))},
	} {
		_, err := CheckAIUsage("acks[1].usage", &u)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", field, err)
		require.Equal(t, field, fe.Field)
	}
	c, err := CheckAIUsage("usage", &AIUsage{InputTokens: 5, CostUSD: "0.25", Model: "m"})
	require.NoError(t, err)
	require.Equal(t, AIUsageCounts{Input: 5, CostNanos: 250_000_000, Model: "m"}, c)
	c, err = CheckAIUsage("usage", nil)
	require.NoError(t, err)
	require.True(t, c.IsZero())
}
