package job

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTransitionsTable(t *testing.T) {
	t.Parallel()
	allowed := []struct{ from, to State }{
		{Scheduled, Pending}, {Scheduled, Cancelled}, {Scheduled, Dead},
		{Pending, Active}, {Pending, Cancelled}, {Pending, Dead}, {Pending, Held}, // an AI budget holds it at its fetch
		{Active, Completed}, {Active, Retrying}, {Active, Dead}, {Active, Pending}, {Active, Cancelled},
		{Retrying, Pending}, {Retrying, Cancelled}, {Retrying, Dead},
		{Completed, Pending}, {Dead, Pending}, {Cancelled, Pending},
		{Held, Pending}, {Held, Scheduled}, {Held, Cancelled}, {Held, Dead},
	}
	for _, tc := range allowed {
		require.True(t, Allowed(tc.from, tc.to), "%s -> %s", tc.from, tc.to)
	}
	refused := []struct{ from, to State }{
		{Pending, Completed}, {Pending, Retrying}, {Scheduled, Active}, {Completed, Active},
		{Dead, Active}, {Completed, Dead}, {Retrying, Active}, {Cancelled, Completed},
		{Held, Active}, {Held, Completed}, {Scheduled, Held}, {Completed, Held},
	}
	for _, tc := range refused {
		require.False(t, Allowed(tc.from, tc.to), "%s -> %s", tc.from, tc.to)
	}
}

func TestStateNamesRoundTrip(t *testing.T) {
	t.Parallel()
	for s := Scheduled; s <= MaxState; s++ {
		got, err := ParseState(s.String())
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	_, err := ParseState("running")
	require.Error(t, err)
	require.True(t, Dead.Terminal())
	require.False(t, Retrying.Terminal())
}

func TestParsePriority(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Priority{"": Normal, "normal": Normal, "high": High, "critical": Critical} {
		p, err := ParsePriority(name)
		require.NoError(t, err)
		require.Equal(t, want, p)
	}
	_, err := ParsePriority("urgent")
	require.ErrorContains(t, err, "urgent")
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	base, max := 5*time.Second, 10*time.Minute
	within := func(t *testing.T, got, nominal time.Duration) {
		t.Helper()
		require.GreaterOrEqual(t, got, nominal)
		require.LessOrEqual(t, got, nominal+time.Duration(float64(nominal)*JitterFraction))
	}
	require.Zero(t, RetryDelay(BackoffNone, base, max, 3, "job_x"))
	for n := 1; n <= 4; n++ {
		within(t, RetryDelay(BackoffFixed, base, max, n, "job_x"), base)
		within(t, RetryDelay(BackoffLinear, base, max, n, "job_x"), base*time.Duration(n))
	}
	within(t, RetryDelay(BackoffExponential, base, max, 1, "job_x"), 5*time.Second)
	within(t, RetryDelay(BackoffExponential, base, max, 2, "job_x"), 10*time.Second)
	within(t, RetryDelay(BackoffExponential, base, max, 3, "job_x"), 20*time.Second)
	within(t, RetryDelay(BackoffExponential, base, max, 4, "job_x"), 40*time.Second)
	// Capped, never past max, even with jitter and huge attempt numbers.
	require.Equal(t, max, RetryDelay(BackoffExponential, base, max, 200, "job_x"))
	require.Equal(t, max, RetryDelay(BackoffLinear, base, max, 1<<40, "job_x"))
	// Deterministic: same job and attempt, same delay.
	require.Equal(t, RetryDelay(BackoffFixed, base, max, 2, "job_a"), RetryDelay(BackoffFixed, base, max, 2, "job_a"))
}

func TestAttemptsRemaining(t *testing.T) {
	t.Parallel()
	j := &Job{MaxRetries: 5, Attempt: 1}
	require.Equal(t, 4, j.AttemptsRemaining())
	require.True(t, j.CanRetry())
	j.Attempt = 6
	require.False(t, j.CanRetry())
	require.Zero(t, j.AttemptsRemaining())
	j = &Job{MaxRetries: 0, Attempt: 1}
	require.False(t, j.CanRetry())
}
