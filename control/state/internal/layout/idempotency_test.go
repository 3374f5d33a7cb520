package layout

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIdemGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	require.Equal(t, []byte("\x29t_x\x00k-1"), Idem("t_x", "k-1"))
	require.Equal(t, []byte("\x2at_x\x00\x00\x00\x00\x00\x00\x00\x01\x02k-1"), IdemExpiry("t_x", 0x102, "k-1"))
	require.Equal(t, []byte("\x2at_x\x00"), IdemExpiries("t_x"))
	require.Equal(t, []byte("\x2bt_x"), IdemCount("t_x"))
	at, k, err := ParseIdemExpiry("t_x", IdemExpiry("t_x", 0x102, "k 1"))
	require.NoError(t, err)
	require.Equal(t, int64(0x102), at)
	require.Equal(t, "k 1", k)
	_, _, err = ParseIdemExpiry("t_y", IdemExpiry("t_x", 1, "k"))
	require.Error(t, err)
}
