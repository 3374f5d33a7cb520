package limits

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/wire"
)

// Only counts that changed are pushed, in reports of at most
// wire.MaxAPIRequestCounts; hours over an hour old are forgotten once pushed.
func TestRequestCounterPushesChangesInBatches(t *testing.T) {
	t.Parallel()
	fc := controlfake.New(controlfake.NewSigner("sig-1"))
	rc := NewMeter(fc, slog.New(slog.DiscardHandler))
	h := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	for i := range wire.MaxAPIRequestCounts + 1 {
		rc.Add(fmt.Sprintf("t_01hx7y2k3m%016d", i), h.Add(time.Minute))
	}
	rc.Add(tenantA, h.Add(2*time.Hour))
	require.NoError(t, rc.push(context.Background(), h.Add(2*time.Hour)))
	require.Len(t, fc.PushList(), 2, "501 counts of hour 9 and one of 11, in two reports")
	require.Len(t, fc.PushList()[0].Counts, wire.MaxAPIRequestCounts)
	require.NotContains(t, rc.hours, h.Unix(), "hour 9 is over an hour old and was pushed")

	require.NoError(t, rc.push(context.Background(), h.Add(2*time.Hour)))
	require.Len(t, fc.PushList(), 2, "nothing changed, nothing sent")
	rc.Add(tenantA, h.Add(2*time.Hour))
	require.NoError(t, rc.push(context.Background(), h.Add(2*time.Hour)))
	require.Equal(t, []wire.APIRequestsCount{{TenantID: tenantA, Hour: h.Add(2 * time.Hour), Count: 2}}, fc.PushList()[2].Counts)
}
