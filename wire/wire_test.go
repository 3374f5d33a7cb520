package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Second:                  "5s",
		10 * time.Minute:                 "10m",
		time.Hour:                        "1h",
		90 * time.Minute:                 "1h30m",
		1500 * time.Millisecond:          "1.5s",
		time.Hour + time.Second:          "1h0m1s",
		250 * time.Millisecond:           "250ms",
		0:                                "0s",
		24*time.Hour + 30*time.Minute:    "24h30m",
		2*time.Minute + 3*time.Second:    "2m3s",
		3*time.Hour + 4*time.Millisecond: "3h0m0.004s",
	} {
		require.Equal(t, want, FormatDuration(d), "%v", d)
		back, err := time.ParseDuration(want)
		require.NoError(t, err)
		require.Equal(t, d, back, "it reads back")
	}
}

func TestParseDuration(t *testing.T) {
	for raw, want := range map[string]time.Duration{
		`"5s"`: 5 * time.Second, `"1h30m"`: 90 * time.Minute, `2.5`: 2500 * time.Millisecond,
		`0`: 0, ` 7 `: 7 * time.Second, `"-3s"`: -3 * time.Second,
	} {
		d, ok, err := ParseDuration(json.RawMessage(raw))
		require.NoError(t, err, raw)
		require.True(t, ok, raw)
		require.Equal(t, want, d, raw)
	}
	for _, absent := range []string{``, `null`, ` null `} {
		_, ok, err := ParseDuration(json.RawMessage(absent))
		require.NoError(t, err)
		require.False(t, ok, "%q is absent", absent)
	}
	// A number too large for a Duration is refused rather than wrapped to
	// a negative one.
	for _, bad := range []string{`""`, `"5"`, `"soon"`, `true`, `{}`, `[1]`, `"5s`, `1e300`, `-1e300`, `9300000000`} {
		_, ok, err := ParseDuration(json.RawMessage(bad))
		require.Error(t, err, bad)
		require.False(t, ok, bad)
	}
}

func TestTimeAndDurationFields(t *testing.T) {
	require.Nil(t, Time(time.Time{}), "the zero time is left out")
	at := time.Date(2026, 11, 24, 9, 30, 0, 5, time.FixedZone("CET", 3600))
	require.JSONEq(t, `"2026-11-24T08:30:00.000000005Z"`, string(Time(at)), "UTC, full precision")
	require.Nil(t, Duration(0), "zero is left out")
	require.JSONEq(t, `"10m"`, string(Duration(10*time.Minute)))

	// Left-out fields vanish from the encoded request.
	b, err := json.Marshal(EnqueueRequest{Queue: "q", ScheduledAt: Time(time.Time{}), RetryBaseDelay: Duration(0)})
	require.NoError(t, err)
	require.NotContains(t, string(b), "scheduled_at")
	require.NotContains(t, string(b), "retry_base_delay")
}

func TestFetchWait(t *testing.T) {
	d, err := FetchWait(nil)
	require.NoError(t, err)
	require.Equal(t, DefaultFetchTimeout, d)
	for secs, want := range map[float64]time.Duration{0: 0, 0.25: 250 * time.Millisecond, 60: MaxFetchTimeout} {
		d, err := FetchWait(&secs)
		require.NoError(t, err, secs)
		require.Equal(t, want, d, secs)
	}
	for _, secs := range []float64{-0.001, 60.5, 1e300, -1e300} {
		_, err := FetchWait(&secs)
		require.ErrorContains(t, err, "timeout must be between 0 and 60 seconds", "%v", secs)
	}
}

func TestLeaseFor(t *testing.T) {
	d, err := LeaseFor(nil)
	require.NoError(t, err)
	require.Equal(t, DefaultLease, d)
	for secs, want := range map[float64]time.Duration{1: MinLease, 90.5: 90500 * time.Millisecond, 43200: MaxLease} {
		d, err := LeaseFor(&secs)
		require.NoError(t, err, secs)
		require.Equal(t, want, d, secs)
	}
	for _, secs := range []float64{0, 0.5, -10, 43201, 1e300} {
		_, err := LeaseFor(&secs)
		require.ErrorContains(t, err, "lease_duration must be between 1 and 43200 seconds", "%v", secs)
	}
}
