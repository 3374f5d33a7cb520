package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// The SDK writes durations with wire.Duration: "5s" style, nothing for
// zero.
func TestDurationsAsSent(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "", 5 * time.Second: "5s", 10 * time.Minute: "10m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 1500 * time.Millisecond: "1.5s",
		time.Hour + time.Second: "1h0m1s", 250 * time.Millisecond: "250ms",
	} {
		raw := wire.Duration(d)
		if want == "" {
			require.Nil(t, raw, d)
			continue
		}
		require.Equal(t, `"`+want+`"`, string(raw), d)
		back, err := time.ParseDuration(want)
		require.NoError(t, err)
		require.Equal(t, d, back)
	}
}

// Durations a caller reads from a wire shape (QueueDefaults) take
// wire.ParseDuration; those of a job detail are strings.
func TestDurationsAsRead(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		`"5s"`: 5 * time.Second, `"10m"`: 10 * time.Minute, `60`: time.Minute,
		`1.5`: 1500 * time.Millisecond, `null`: 0, `""`: 0,
	} {
		// wire.ParseDuration refuses "", though its doc says it is absent.
		if in != `""` {
			d, _, err := wire.ParseDuration(json.RawMessage(in))
			require.NoError(t, err, in)
			require.Equal(t, want, d, in)
		}
		if in[0] == '"' {
			var s string
			require.NoError(t, json.Unmarshal([]byte(in), &s))
			d, err := parseDuration("f", s)
			require.NoError(t, err, in)
			require.Equal(t, want, d, in)
		}
	}
	for _, bad := range []string{`"soon"`, `true`} {
		_, _, err := wire.ParseDuration(json.RawMessage(bad))
		require.Error(t, err, bad)
	}
	_, err := parseDuration("retry_max_delay", "soon")
	require.ErrorContains(t, err, "retry_max_delay")
}

func TestCeilSeconds(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(0), ceilSeconds(0))
	require.Equal(t, int64(1), ceilSeconds(time.Millisecond))
	require.Equal(t, int64(30), ceilSeconds(30*time.Second))
	require.Equal(t, int64(31), ceilSeconds(30*time.Second+1))
}
