package service

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

// The short gap of a cron may come after a long one: a run at 03:30 then
// 03:00 and 03:30 the next day, seen from 03:15 in Paris (01:15 UTC in
// summer), is refused on the second gap.
func TestBackupIntervalLooksPastTheFirstGap(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	sched, err := cron.ParseStandard("0,30 3 * * *")
	require.NoError(t, err)
	now := time.Date(2026, 7, 1, 1, 15, 0, 0, time.UTC)
	err = checkBackupInterval(sched, paris, now, time.Hour)
	require.ErrorContains(t, err, "30m apart")
	require.ErrorContains(t, err, "2026-07-02T03:00:00+02:00")
	require.NoError(t, checkBackupInterval(sched, paris, now, 30*time.Minute))
	require.NoError(t, checkBackupInterval(sched, paris, now, 0))
	// A year's single run ends the look at once.
	yearly, err := cron.ParseStandard("@yearly")
	require.NoError(t, err)
	require.NoError(t, checkBackupInterval(yearly, paris, now, 24*time.Hour))
}
