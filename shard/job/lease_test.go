package job

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLeaseTokenRoundTripsAndRefusesAnythingElse(t *testing.T) {
	t.Parallel()
	for _, l := range []LeaseID{{1, 1}, {2, 1_800_000_000_123_456_789}, {1 << 31, -5}} {
		got, ok := ParseLeaseToken(l.Token())
		require.True(t, ok, l.Token())
		require.Equal(t, l, got)
	}
	tok := LeaseID{Attempt: 3, At: 1_800_000_000_000_000_001}.Token()
	for _, bad := range []string{"", "x", tok + "A", tok[:len(tok)-1], tok + "=", "AQ", "AQEA", // no attempt or stamp
		LeaseID{Attempt: 0, At: 5}.Token(), LeaseID{Attempt: 1, At: 0}.Token(), "AgEK", // version 2
		"AYEACg", // attempt spelled in two bytes
	} {
		_, ok := ParseLeaseToken(bad)
		require.False(t, ok, "%q", bad)
	}
}

func TestLeaseAfterStampsPastThePreviousLease(t *testing.T) {
	t.Parallel()
	j := &Job{}
	LeaseAfter(j, "a", "h", 100, 10)
	require.Equal(t, LeaseID{Attempt: 1, At: 100}, LeaseOf(j))
	Unlease(j)
	LeaseAfter(j, "b", "h", 100, 10) // the clock stood still
	require.Equal(t, LeaseID{Attempt: 1, At: 101}, LeaseOf(j))
	require.Equal(t, int64(110), j.LeaseUntil)
	require.True(t, j.Holds(LeaseID{1, 101}))
	require.False(t, j.Holds(LeaseID{1, 100}))
}
