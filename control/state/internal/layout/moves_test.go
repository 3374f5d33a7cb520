package layout

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMoveGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	require.Equal(t, []byte("\x27mov_1"), Move("mov_1"))
	require.Equal(t, []byte("\x27"), Moves())
	require.Equal(t, []byte("\x28t_x\x00orders"), MoveRunning("t_x", "orders"))
}
