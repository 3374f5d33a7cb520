package state

import (
	"strings"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/robfig/cron/v3"
)

func ListBackups(r pebble.Reader, tid string) ([]BackupRecord, error) {
	var out []BackupRecord
	err := scanJSON(r, layout.Backups(tid), func(_ []byte, b BackupRecord) { out = append(out, b) })
	return out, err
}

// Next is the policy's next run time: the first its cron names after
// both Since and LastRun.
func (p BackupPolicy) Next() (time.Time, bool) {
	sched, loc, err := ParseBackupCron(p.Cron, p.Timezone)
	if err != nil {
		return time.Time{}, false
	}
	from := p.Since
	if p.LastRun.After(from) {
		from = p.LastRun
	}
	t := sched.Next(from.In(loc))
	return t.UTC(), !t.IsZero()
}

// Due is the run a policy owes at now: the latest time its cron names
// that is not after now, when its next run is; runs missed while no
// leader ran it are skipped, not taken one after another.
func (p BackupPolicy) Due(now time.Time) (time.Time, bool) {
	at, ok := p.Next()
	if !ok || at.After(now) {
		return time.Time{}, false
	}
	sched, loc, _ := ParseBackupCron(p.Cron, p.Timezone) // next parsed it
	for range 100000 {
		n := sched.Next(at.In(loc))
		if n.IsZero() || n.After(now) {
			break
		}
		at = n.UTC()
	}
	return at, true
}

// ParseBackupCron parses a policy's cron and time zone by the rules of
// shard schedules (shard/service/schedules.go parseCron): a standard
// 5-field expression or a descriptor, in an IANA zone other than "Local"
// (replicas could disagree on it), the zone never inside the expression.
func ParseBackupCron(spec, tz string) (cron.Schedule, *time.Location, error) {
	if tz == "" || tz == "Local" {
		return nil, nil, apierr.Field("timezone", "timezone must be an IANA time zone name like \"Europe/Paris\" or \"UTC\"")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, nil, apierr.Field("timezone", "unknown time zone %q", tz)
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil, apierr.Field("cron", "cron is required")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, nil, apierr.Field("cron", "set the time zone in the timezone field, not in cron")
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, nil, apierr.Field("cron", "invalid cron expression %q: %v", spec, err)
	}
	return sched, loc, nil
}
