package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
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
	// Refused is why its last run enqueued nothing: its payload failed
	// its queue's schema ("" after a run that enqueued).
	Refused string `codec:"rf,omitempty"`
}

// Every write of schedule state goes through putSchedule and
// deleteSchedule, which keep the name index and the run index in step with
// the record, all in the entry's one batch. A name is unique per queue
// (keys.ScheduleQueueName); stores and snapshots of earlier versions,
// when it was unique per namespace, hold keys.ScheduleName entries, which
// are read beside the new ones and dropped when their schedule is
// rewritten or deleted: no migration pass, so the state stays a function
// of the log.

// ReadSchedule reads a schedule record.
func ReadSchedule(r pebble.Reader, ns, id string) (*Schedule, error) {
	return readRecord[Schedule](r, keys.Schedule(ns, id), "schedule", id)
}

// SchedulesNamed reads ns's schedules called name, one per queue at
// most, in queue order (safe from any goroutine on a store). The index
// is read in both its forms: the per-queue keys written now and the one
// namespace-wide key (keys.ScheduleName) earlier versions wrote. An entry
// counts only while its record still bears that name in that queue, so
// an entry a node of another version left behind decides nothing.
func SchedulesNamed(r pebble.Reader, ns, name string) ([]*Schedule, error) {
	p := keys.ScheduleNamePrefix(ns, name)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("shard: schedules named %q: %w", name, err)
	}
	defer it.Close()
	var out []*Schedule
	for ok := it.First(); ok; ok = it.Next() {
		s, err := namedRecord(r, ns, string(it.Value()), name)
		if err != nil {
			return nil, err
		}
		if s != nil && bytes.Equal(it.Key(), keys.ScheduleQueueName(ns, s.Name, s.Queue)) {
			out = append(out, s)
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("shard: schedules named %q: %w", name, err)
	}
	id, ok, err := legacyNamed(r, ns, name)
	if err != nil || !ok || slices.ContainsFunc(out, func(s *Schedule) bool { return s.ID == id }) {
		return out, err
	}
	s, err := namedRecord(r, ns, id, name)
	if err != nil || s == nil {
		return out, err
	}
	out = append(out, s)
	slices.SortFunc(out, func(a, b *Schedule) int { return strings.Compare(a.Queue, b.Queue) })
	return out, nil
}

// namedRecord reads schedule id if it still bears name, else nil.
func namedRecord(r pebble.Reader, ns, id, name string) (*Schedule, error) {
	s, err := ReadSchedule(r, ns, id)
	if apierr.CodeOf(err) == apierr.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		return nil, nil
	}
	return s, nil
}

// legacyNamed reads the namespace-wide name key of earlier versions.
func legacyNamed(r pebble.Reader, ns, name string) (string, bool, error) {
	v, closer, err := r.Get(keys.ScheduleName(ns, name))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("shard: schedule name %q: %w", name, err)
	}
	defer closer.Close()
	return string(v), true, nil
}

// nameHeld reports whether a schedule other than except holds s's name:
// any schedule of the namespace under the namespace rule of the older
// commands, one of s's queue under the per-queue rule.
func nameHeld(tx *replica.Tx, ns string, s *Schedule, except string, perQueue bool) bool {
	named, err := SchedulesNamed(tx, ns, s.Name)
	must(err)
	for _, o := range named {
		if o.ID != except && (!perQueue || o.Queue == s.Queue) {
			return true
		}
	}
	return false
}

// putSchedule writes s over old (nil for a new schedule), moving its name
// and run-index entries. The name goes in the per-queue index only.
func (e *Engine) putSchedule(tx *replica.Tx, ns string, old, s *Schedule) {
	if old != nil {
		unindexSchedule(tx, ns, old)
	}
	s.UpdatedAt = tx.Now.UnixNano()
	must(tx.Set(keys.ScheduleQueueName(ns, s.Name, s.Queue), []byte(s.ID), nil))
	if s.Enabled && s.NextRun != 0 {
		e.setTimed(tx, ns, keys.KindScheduleRun, s.NextRun, s.ID)
	}
	must(tx.Set(keys.Schedule(ns, s.ID), replica.Encode(s), nil))
}

func (e *Engine) deleteSchedule(tx *replica.Tx, ns string, s *Schedule) {
	unindexSchedule(tx, ns, s)
	must(tx.Delete(keys.Schedule(ns, s.ID), nil))
}

// unindexSchedule removes s's index entries: its name in either form
// (only where the entry is s's: under the per-queue rule another
// queue's schedule may hold an earlier version's key of the same name)
// and its run.
func unindexSchedule(tx *replica.Tx, ns string, s *Schedule) {
	dropIfOf(tx, keys.ScheduleQueueName(ns, s.Name, s.Queue), s.ID)
	dropIfOf(tx, keys.ScheduleName(ns, s.Name), s.ID)
	if s.Enabled && s.NextRun != 0 {
		must(tx.Delete(keys.Timed(ns, keys.KindScheduleRun, s.NextRun, s.ID), nil))
	}
}

// dropIfOf deletes index key k when its value is id.
func dropIfOf(tx *replica.Tx, k []byte, id string) {
	v, closer, err := tx.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return
	}
	must(err)
	mine := string(v) == id
	must(closer.Close())
	if mine {
		must(tx.Delete(k, nil))
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
