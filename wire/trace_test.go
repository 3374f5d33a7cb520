package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The W3C examples pass; each way a value breaks the spec is refused.
func TestCheckTraceContext(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, ok := range []string{tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff"} {
		require.NoError(t, CheckTraceParent(ok), ok)
	}
	for _, bad := range []string{"", tp + " ", " " + tp, tp[:54], strings.ToUpper(tp), "01" + tp[2:], "ff" + tp[2:],
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1"} {
		require.Error(t, CheckTraceParent(bad), bad)
	}
	for _, ok := range []string{"", "congo=t61rcWkgMzE", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", " a=1 , ,b=2\t",
		"tenant@system=v", "0t@s=v", "a_-*/b=x y", "k=" + strings.Repeat("v", 256)} {
		require.NoError(t, CheckTraceState(ok), ok)
	}
	for _, bad := range []string{"a", "=v", "A=1", "a=", "a=1,a=2", "a=b=c", "1a=v", "a@=v", "@s=v", "t@S=v", "t@sssssssssssssss=v",
		"a=\x01", "a=é", "k=" + strings.Repeat("v", 257), strings.Repeat("k", 257) + "=v"} {
		require.Error(t, CheckTraceState(bad), bad)
	}
}

// A new trace is valid, sampled, and random.
func TestNewTraceParent(t *testing.T) {
	t.Parallel()
	a, b := NewTraceParent(), NewTraceParent()
	require.NoError(t, CheckTraceParent(a))
	require.True(t, strings.HasSuffix(a, "-01"))
	require.NotEqual(t, a[3:35], b[3:35])
	require.NotEqual(t, a[36:52], b[36:52])
}
