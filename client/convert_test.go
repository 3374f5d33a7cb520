package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "", 5 * time.Second: "5s", 10 * time.Minute: "10m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 1500 * time.Millisecond: "1.5s",
		time.Hour + time.Second: "1h0m1s", 250 * time.Millisecond: "250ms",
	} {
		require.Equal(t, want, formatDuration(d), d)
		if want != "" {
			back, err := time.ParseDuration(want)
			require.NoError(t, err)
			require.Equal(t, d, back)
		}
	}
}

func TestWireDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		`"5s"`: 5 * time.Second, `"10m"`: 10 * time.Minute, `60`: time.Minute,
		`1.5`: 1500 * time.Millisecond, `null`: 0, `""`: 0,
	} {
		var d wireDuration
		require.NoError(t, json.Unmarshal([]byte(in), &d), in)
		require.Equal(t, want, time.Duration(d), in)
	}
	var d wireDuration
	require.Error(t, json.Unmarshal([]byte(`"soon"`), &d))
	require.Error(t, json.Unmarshal([]byte(`true`), &d))
}

func TestCeilSeconds(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(0), ceilSeconds(0))
	require.Equal(t, int64(1), ceilSeconds(time.Millisecond))
	require.Equal(t, int64(30), ceilSeconds(30*time.Second))
	require.Equal(t, int64(31), ceilSeconds(30*time.Second+1))
}
