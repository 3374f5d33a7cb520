package leader

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOldestOpenHour(t *testing.T) {
	t.Parallel()
	require.Equal(t, hourOf(10), oldestOpenHour(hourOf(11).Add(CloseMargin)), "exactly at the bound: hour 10 stays open")
	require.Equal(t, hourOf(11), oldestOpenHour(hourOf(11).Add(CloseMargin+time.Nanosecond)))
	require.Equal(t, hourOf(11), oldestOpenHour(hourOf(12)))
}

func hourOf(h int) time.Time { return time.Date(2026, 11, 5, h, 0, 0, 0, time.UTC) }
