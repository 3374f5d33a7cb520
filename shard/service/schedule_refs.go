package service

import (
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A schedule reference (every /schedules/{ref} route) is an id when it
// starts with wire.ScheduleIDPrefix, else a name. Names are unique per
// queue, so a name resolves among the schedules of that name whose
// queues sc holds: none is not found, one is it, more are 409
// ambiguous_name naming those queues. Schedules outside sc never change
// the answer, so a scoped caller learns nothing of them.

// readSchedule reads schedule ref from local state: not found when its
// queue is outside sc.
func (s *Service) readSchedule(ns string, sc tenancy.QueueScope, ref string) (*engine.Schedule, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if strings.HasPrefix(ref, wire.ScheduleIDPrefix) {
		if len(ref) != keys.ScheduleIDLen {
			return nil, scheduleNotFound(ref) // of the wrong shape, simply not found
		}
		sched, err := engine.ReadSchedule(s.node.DB(), ns, ref)
		if err != nil {
			return nil, err
		}
		if !sc.Allows(sched.Queue) {
			// word for word the store's answer for an id it lacks
			return nil, apierr.New(apierr.NotFound, "schedule %s not found", ref)
		}
		return sched, nil
	}
	named, err := engine.SchedulesNamed(s.node.DB(), ns, ref)
	if err != nil {
		return nil, err
	}
	seen := named[:0]
	for _, sched := range named {
		if sc.Allows(sched.Queue) {
			seen = append(seen, sched)
		}
	}
	switch len(seen) {
	case 0:
		return nil, scheduleNotFound(ref)
	case 1:
		return seen[0], nil
	}
	queues := make([]string, len(seen))
	for i, sched := range seen {
		queues[i] = sched.Queue
	}
	return nil, apierr.New(apierr.AmbiguousName, "schedules named %q are in queues %s: refer to one by its id", ref, strings.Join(queues, ", "))
}

// scopedScheduleID is the id of schedule ref (readSchedule). An id under
// every queue is taken as it is: the command finds it or answers not
// found, so nothing needs reading first.
func (s *Service) scopedScheduleID(ns string, sc tenancy.QueueScope, ref string) (string, error) {
	if sc.All() && strings.HasPrefix(ref, wire.ScheduleIDPrefix) {
		if err := namespaceOK(ns); err != nil {
			return "", err
		}
		if len(ref) != keys.ScheduleIDLen {
			return "", scheduleNotFound(ref)
		}
		return ref, nil
	}
	sched, err := s.readSchedule(ns, sc, ref)
	if err != nil {
		return "", err
	}
	return sched.ID, nil
}

func scheduleNotFound(ref string) error {
	return apierr.New(apierr.NotFound, "schedule %q not found", ref)
}
