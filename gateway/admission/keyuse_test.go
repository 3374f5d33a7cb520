package admission

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestKeyUsageReportsInBatchesAndKeepsWhatFailed(t *testing.T) {
	t.Parallel()
	fc := controlfake.New(controlfake.NewSigner("sig-1"))
	uses := newKeyUses(fc, nil)
	now := time.Now()
	n := wire.MaxKeyUses + 10
	for i := range n {
		c := controlfake.Claims(tenantA, fmt.Sprintf("key_%d", i), tenancy.RoleProducer, "default")
		uses.saw(VerifiedKey{Claims: &c, use: new(useMark)}, now)
	}
	require.NoError(t, uses.report(t.Context()))
	require.Len(t, fc.KeyUses(), n, "in two reports")

	fc.SetGone(true)
	c := controlfake.Claims(tenantA, "key_late", tenancy.RoleProducer, "default")
	v := VerifiedKey{Claims: &c, use: new(useMark)}
	uses.saw(v, now)
	uses.saw(v, now.Add(time.Second))
	require.Error(t, uses.report(t.Context()))
	require.Len(t, uses.pending, 1)
	require.True(t, uses.pending[keyRef{tenant: tenantA, id: "key_late"}].Equal(now), "kept for the next report, at its first use")
}
