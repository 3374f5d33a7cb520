package layout

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAuditGoldenBytes(t *testing.T) {
	t.Parallel()
	// On-disk format: these bytes must never change.
	require.Equal(t, []byte("\x2dt_x\x00"), Audits("t_x"))
	require.Equal(t, []byte("\x2dt_x\x00\x00\x00\x00\x00\x00\x00\x01\x02"), AuditAt("t_x", 258))
	require.Equal(t, []byte("\x2dt_x\x00\x00\x00\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x00\x00\x00\x07\x00\x03"), Audit("t_x", 258, 7, 3))
	require.Equal(t, []byte("\x2et_x"), AuditRetention("t_x"))
	at, idx, pos, ok := AuditPlace("t_x", Audit("t_x", 258, 7, 3))
	require.True(t, ok)
	require.Equal(t, []any{int64(258), uint64(7), uint16(3)}, []any{at, idx, pos})
	_, _, _, ok = AuditPlace("t_x", AuditAt("t_x", 258))
	require.False(t, ok)
	require.False(t, bytes.HasPrefix(Audit("t_xy", 1, 1, 0), Audits("t_x")), "tenants do not mix")
	require.Negative(t, bytes.Compare(Audit("t_x", 258, 9, 0), Audit("t_x", 259, 1, 0)), "time order first")
}
