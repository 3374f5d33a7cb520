package admission

import (
	"log/slog"
	"strconv"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
)

// The verified keys are a bounded LRU cache of TokenCacheSize.
func TestCachesAreBoundedLRU(t *testing.T) {
	t.Parallel()
	g, err := New(t.Context(), Config{Control: controlfake.New(controlfake.NewSigner("sig-1")), Clock: clockwork.NewRealClock(),
		Logger: slog.New(slog.DiscardHandler), TokenCacheSize: 16, DecisionCacheSize: 16})
	require.NoError(t, err)

	tokens := g.auth.tokens
	for i := range 1000 {
		tokens.Add(strconv.Itoa(i), VerifiedKey{expires: int64(i)})
		require.LessOrEqual(t, tokens.Len(), 16)
	}
	v, ok := tokens.Get("999")
	require.True(t, ok, "the newest entry survives eviction")
	require.EqualValues(t, 999, v.expires)
	_, ok = tokens.Get("984") // the oldest, now just used
	require.True(t, ok)
	tokens.Add("1000", VerifiedKey{})
	require.True(t, tokens.Contains("984"), "a recently used entry survives eviction")
	require.False(t, tokens.Contains("985"), "the least recently used entry goes first")
	require.Equal(t, tokens.Len(), g.CachedKeys())
}
