package layout

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBackupGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	require.Equal(t, []byte("\x22t_x\x00bkp_1"), Backup("t_x", "bkp_1"))
	require.Equal(t, []byte("\x22t_x\x00"), Backups("t_x"))
	require.Equal(t, []byte("\x22"), AllBackups())
	require.Equal(t, []byte("\x23t_x\x00orders"), BackupPolicy("t_x", "orders"))
	require.Equal(t, []byte("\x23"), AllBackupPolicies())
	require.True(t, bytes.HasPrefix(Backup("t_x", "bkp_1"), Backups("t_x")))
	require.False(t, bytes.HasPrefix(Backup("t_xy", "bkp_1"), Backups("t_x")), "one tenant's prefix holds no other's")
}
