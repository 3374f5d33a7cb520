package shard

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones must not depend on the host's zoneinfo: every node computes the same next run

	"github.com/cockroachdb/pebble"
	"github.com/robfig/cron/v3"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// schedule is the stored record of a cron schedule. Times are unix
// nanoseconds (0 = unset). NextRun is computed by the proposer from Cron and
// Timezone and carried in the command; the FSM only stores and compares it,
// so it never parses a cron spec or loads a time zone.
type schedule struct {
	ID         string       `codec:"id"`
	Name       string       `codec:"n"`
	Queue      string       `codec:"q"`
	Cron       string       `codec:"c"`
	Timezone   string       `codec:"tz"`
	Payload    []byte       `codec:"p"`
	Priority   job.Priority `codec:"pr"`
	UniqueKey  string       `codec:"u"`
	MaxRetries int          `codec:"r"`
	Enabled    bool         `codec:"e"`
	NextRun    int64        `codec:"nr"` // 0 while disabled or when the spec has no further run
	LastRun    int64        `codec:"lr"` // the run time last fired for
	LastJobID  string       `codec:"lj"`
	CreatedAt  int64        `codec:"ca"`
	UpdatedAt  int64        `codec:"ua"`
}

// Every write of schedule state goes through putSchedule and
// deleteSchedule, which keep the name index and the run index in step with
// the record, all in the entry's one batch.

func getSchedule(r pebble.Reader, ns, id string) (*schedule, error) {
	v, closer, err := r.Get(keys.Schedule(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "schedule %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("shard: read schedule %s: %w", id, err)
	}
	defer closer.Close()
	s := new(schedule)
	if err := decode(v, s); err != nil {
		return nil, fmt.Errorf("shard: decode schedule %s: %w", id, err)
	}
	return s, nil
}

// scheduleByName returns the id of ns's schedule called name, if any.
func scheduleByName(r pebble.Reader, ns, name string) (string, bool) {
	v, closer, err := r.Get(keys.ScheduleName(ns, name))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", false
	}
	must(err)
	defer closer.Close()
	return string(v), true
}

// putSchedule writes s over old (nil for a new schedule), moving its name
// and run-index entries.
func (e *Engine) putSchedule(tx *replica.Tx, ns string, old, s *schedule) {
	if old != nil {
		unindexSchedule(tx, ns, old)
	}
	s.UpdatedAt = tx.Now.UnixNano()
	must(tx.Set(keys.ScheduleName(ns, s.Name), []byte(s.ID), nil))
	if s.Enabled && s.NextRun != 0 {
		e.setTimed(tx, ns, keys.KindScheduleRun, s.NextRun, s.ID)
	}
	must(tx.Set(keys.Schedule(ns, s.ID), encode(s), nil))
}

func (e *Engine) deleteSchedule(tx *replica.Tx, ns string, s *schedule) {
	unindexSchedule(tx, ns, s)
	must(tx.Delete(keys.Schedule(ns, s.ID), nil))
}

func unindexSchedule(tx *replica.Tx, ns string, s *schedule) {
	must(tx.Delete(keys.ScheduleName(ns, s.Name), nil))
	if s.Enabled && s.NextRun != 0 {
		must(tx.Delete(keys.Timed(ns, keys.KindScheduleRun, s.NextRun, s.ID), nil))
	}
}

// listSchedules reads ns's schedules in id (creation) order. The records
// of one namespace are one key range, so this is a single bounded scan.
func listSchedules(r pebble.Reader, ns string) ([]*schedule, error) {
	p := keys.SchedulePrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("shard: list schedules: %w", err)
	}
	defer it.Close()
	out := []*schedule{}
	for ok := it.First(); ok; ok = it.Next() {
		s := new(schedule)
		if err := decode(it.Value(), s); err != nil {
			return nil, fmt.Errorf("shard: decode schedule: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// cronSpec is a parsed cron expression in its time zone. Only proposers
// (request handlers and the leader's sweep) build one.
type cronSpec struct {
	sched cron.Schedule
	loc   *time.Location
}

// parseCron parses a standard 5-field cron expression or a descriptor
// ("@hourly", "@every 90s") in the IANA time zone tz. Errors name the
// field at fault.
func parseCron(spec, tz string) (*cronSpec, error) {
	if tz == "" || tz == "Local" {
		// "Local" is whatever zone the node runs in: replicas could disagree.
		return nil, apierr.Field("timezone", "timezone must be an IANA time zone name like \"Europe/Paris\" or \"UTC\"")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, apierr.Field("timezone", "unknown time zone %q", tz)
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, apierr.Field("cron", "cron is required")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, apierr.Field("cron", "set the time zone in the timezone field, not in cron")
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, apierr.Field("cron", "invalid cron expression %q: %v", spec, err)
	}
	return &cronSpec{sched: s, loc: loc}, nil
}

// next returns the first run strictly after now (unix ns), or 0 when the
// expression never matches again.
func (c *cronSpec) next(now int64) int64 {
	t := c.sched.Next(time.Unix(0, now).In(c.loc))
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
