package engine

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Schedule is the stored record of a cron schedule. Times are unix
// nanoseconds (0 = unset). NextRun is computed by the proposer from Cron and
// Timezone and carried in the command; the FSM only stores and compares it,
// so it never parses a cron spec or loads a time zone.
type Schedule struct {
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
	// DefaultRetries: max_retries was left out, so the jobs it fires take
	// their queue's default (MaxRetries, the built-in one, applies when
	// the queue has none). Schedules stored before it lack it and keep
	// the max_retries they were stored with.
	DefaultRetries bool `codec:"dr,omitempty"`
}

// Every write of schedule state goes through putSchedule and
// deleteSchedule, which keep the name index and the run index in step with
// the record, all in the entry's one batch.

// ReadSchedule reads a schedule record.
func ReadSchedule(r pebble.Reader, ns, id string) (*Schedule, error) {
	return readRecord[Schedule](r, keys.Schedule(ns, id), "schedule", id)
}

// ScheduleIDByName returns the id of ns's schedule called name, if any
// (safe from any goroutine on a store).
func ScheduleIDByName(r pebble.Reader, ns, name string) (string, bool) {
	return scheduleByName(r, ns, name)
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
func (e *Engine) putSchedule(tx *replica.Tx, ns string, old, s *Schedule) {
	if old != nil {
		unindexSchedule(tx, ns, old)
	}
	s.UpdatedAt = tx.Now.UnixNano()
	must(tx.Set(keys.ScheduleName(ns, s.Name), []byte(s.ID), nil))
	if s.Enabled && s.NextRun != 0 {
		e.setTimed(tx, ns, keys.KindScheduleRun, s.NextRun, s.ID)
	}
	must(tx.Set(keys.Schedule(ns, s.ID), replica.Encode(s), nil))
}

func (e *Engine) deleteSchedule(tx *replica.Tx, ns string, s *Schedule) {
	unindexSchedule(tx, ns, s)
	must(tx.Delete(keys.Schedule(ns, s.ID), nil))
}

func unindexSchedule(tx *replica.Tx, ns string, s *Schedule) {
	must(tx.Delete(keys.ScheduleName(ns, s.Name), nil))
	if s.Enabled && s.NextRun != 0 {
		must(tx.Delete(keys.Timed(ns, keys.KindScheduleRun, s.NextRun, s.ID), nil))
	}
}

// ListSchedules reads ns's schedules in id (creation) order: one bounded scan.
func ListSchedules(r pebble.Reader, ns string) ([]*Schedule, error) {
	p := keys.SchedulePrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("shard: list schedules: %w", err)
	}
	defer it.Close()
	out := []*Schedule{}
	for ok := it.First(); ok; ok = it.Next() {
		s := new(Schedule)
		if err := replica.Decode(it.Value(), s); err != nil {
			return nil, fmt.Errorf("shard: decode schedule: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}
