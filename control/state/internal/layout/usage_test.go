package layout

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func hourAt(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }

func TestUsageGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	h := hourAt(2026, 11, 5, 13)
	require.Equal(t, []byte("\x1ct_x\x00emails\x002026110513\x00s1"), Usage("t_x", "emails", h, "s1"))
	require.Equal(t, []byte("\x1ct_x\x00"), TenantUsage("t_x"))
	require.Equal(t, []byte("\x1ct_x\x00emails\x00"), NamespaceUsage("t_x", "emails"))
	require.Equal(t, []byte("\x1ct_x\x00emails\x002026110513\x00"), NamespaceUsageFrom("t_x", "emails", h))
	require.Equal(t, []byte("\x1dt_x\x002026110513\x00gw_1"), APIRequests("t_x", h, "gw_1"))
	require.Equal(t, []byte("\x1dt_x\x002026110513\x00"), TenantAPIRequestsFrom("t_x", h))
	require.Equal(t, []byte("\x1es1"), PullCursor("s1"))
	require.Equal(t, "s1", PullCursorShard(PullCursor("s1")))
	require.Equal(t, "2026110513", Hour(h.In(time.FixedZone("x", 3600))), "always UTC")
	got, err := ParseHour("2026110513")
	require.NoError(t, err)
	require.True(t, got.Equal(h))
	for _, k := range [][]byte{Usage("t_x", "a", h, "s1"), APIRequests("t_x", h, "g"), PullCursor("s1")} {
		require.NotEqual(t, byte(0x00), k[0], "%q", k)
	}
}

func TestUsageKeysSortByNamespaceHourShard(t *testing.T) {
	t.Parallel()
	h1, h2 := hourAt(2026, 11, 5, 9), hourAt(2026, 11, 5, 10)
	want := [][]byte{
		Usage(tidA, "a", h1, "s1"), Usage(tidA, "a", h1, "s2"), Usage(tidA, "a", h2, "s1"),
		Usage(tidA, "a-b", h1, "s1"), Usage(tidA, "b", h1, "s1"), Usage(tidB, "a", h1, "s1"),
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, bytes.Compare)
	require.Equal(t, want, got)
	ns, hour, shard, ok := UsageParts(tidA, want[2])
	require.True(t, ok)
	require.Equal(t, []string{"a", "2026110510", "s1"}, []string{ns, hour, shard})
	require.False(t, bytes.HasPrefix(want[5], TenantUsage(tidA)), "tenants do not mix")
	require.Equal(t, -1, bytes.Compare(NamespaceUsageFrom(tidA, "a", h2), want[2]))
	require.Equal(t, 1, bytes.Compare(NamespaceUsageFrom(tidA, "a", h2), want[1]))

	reqs := [][]byte{APIRequests(tidA, h1, "gw_b"), APIRequests(tidA, h2, "gw_a"), APIRequests(tidB, h1, "gw_a")}
	require.True(t, slices.IsSortedFunc(reqs, bytes.Compare), "a tenant's counts sort by hour")
	require.Equal(t, "2026110510", APIRequestsHour(tidA, reqs[1]))
}
