package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones must not depend on the host's zoneinfo: every node computes the same next run
	"unicode"

	"github.com/robfig/cron/v3"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// toSchedule validates r and builds the record to propose, with its next
// run after now when enabled.
func toSchedule(lim Limits, r *wire.ScheduleRequest, id string, now time.Time) (*engine.Schedule, error) {
	if err := validScheduleName(r.Name); err != nil {
		return nil, err
	}
	if err := tenancy.ValidateQueue(r.Queue); err != nil {
		if r.Queue == "" {
			return nil, apierr.Field("queue", "queue is required")
		}
		return nil, apierr.Field("queue", "%v", err)
	}
	s := &engine.Schedule{ID: id, Name: r.Name, Queue: r.Queue, Cron: strings.TrimSpace(r.Cron), Timezone: r.Timezone,
		MaxRetries: job.DefaultMaxRetries, Enabled: true}
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	spec, err := newCron(s.Cron, s.Timezone)
	if err != nil {
		return nil, err
	}
	if spec.next(now.UnixNano()) == 0 {
		return nil, apierr.Field("cron", "cron expression %q never matches a future time", s.Cron)
	}
	if s.Payload, err = schedulePayload(lim, r.Payload); err != nil {
		return nil, err
	}
	if s.Priority, err = job.ParsePriority(r.Priority); err != nil {
		return nil, apierr.Field("priority", "%v", err)
	}
	if len(r.UniqueKey) > wire.MaxUniqueKey || strings.ContainsRune(r.UniqueKey, 0) {
		return nil, apierr.Field("unique_key", "unique_key must be at most %d bytes without NUL", wire.MaxUniqueKey)
	}
	s.UniqueKey = r.UniqueKey
	s.DefaultRetries = r.MaxRetries == nil // the queue's default, as for an enqueue
	if r.MaxRetries != nil {
		if *r.MaxRetries < 0 || *r.MaxRetries > wire.MaxMaxRetries {
			return nil, apierr.Field("max_retries", "max_retries must be between 0 and %d", wire.MaxMaxRetries)
		}
		s.MaxRetries = *r.MaxRetries
	}
	if r.Enabled != nil {
		s.Enabled = *r.Enabled
	}
	if s.Enabled {
		s.NextRun = spec.next(now.UnixNano())
	}
	return s, nil
}

func validScheduleName(name string) error {
	if name == "" {
		return apierr.Field("name", "name is required")
	}
	if len(name) > wire.MaxScheduleName {
		return apierr.Field("name", "name must be at most %d bytes", wire.MaxScheduleName)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return apierr.Field("name", "name must not contain control characters")
	}
	return nil
}

// schedulePayload is the payload of every job the schedule fires, so
// the plan's limit is checked here, once: a fire copies it as it is.
func schedulePayload(lim Limits, raw json.RawMessage) ([]byte, error) {
	p, err := lim.checkJSON("payload", raw, wire.MaxPayloadBytes)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return []byte("null"), nil
	}
	return p, nil
}

// everyOK refuses an "@every" period wire.CheckEvery refuses. Only new
// and replaced schedules are checked; one stored before keeps firing as
// it did.
func everyOK(spec string) error {
	if err := wire.CheckEvery(spec); err != nil {
		return apierr.Field("cron", "%v", err)
	}
	return nil
}

// newCron checks the cron expression and time zone of a new or replaced
// schedule (or a preview of one) and parses them.
func newCron(spec, tz string) (*cronSpec, error) {
	c, err := parseCron(spec, tz)
	if err != nil {
		return nil, err
	}
	if err := everyOK(spec); err != nil {
		return nil, err
	}
	return c, nil
}

// PreviewSchedule lists the next runs of r's cron expression after now,
// checked as a new schedule's is. It reads and stores nothing, so any
// node answers it. An expression that never matches again lists none
// (a create refuses it).
func (s *Service) PreviewSchedule(r *wire.SchedulePreviewRequest) (*wire.SchedulePreview, error) {
	n := wire.DefaultSchedulePreview
	if r.Count != nil {
		n = *r.Count
	}
	if n < 1 || n > wire.MaxSchedulePreview {
		return nil, apierr.Field("count", "count must be between 1 and %d", wire.MaxSchedulePreview)
	}
	out := &wire.SchedulePreview{Cron: strings.TrimSpace(r.Cron), Timezone: r.Timezone, NextRuns: []time.Time{}}
	if out.Timezone == "" {
		out.Timezone = "UTC"
	}
	spec, err := newCron(out.Cron, out.Timezone)
	if err != nil {
		return nil, err
	}
	for at := s.now(); len(out.NextRuns) < n; {
		if at = spec.next(at); at == 0 {
			break
		}
		out.NextRuns = append(out.NextRuns, time.Unix(0, at).In(spec.loc))
	}
	return out, nil
}

// CreateSchedule validates and stores a new schedule. Its name must be
// free in its queue only, so the answer does not depend on schedules of
// queues outside sc.
func (s *Service) CreateSchedule(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, r *wire.ScheduleRequest) (*wire.Schedule, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := newScheduleName(r.Name); err != nil {
		return nil, err
	}
	sched, err := toSchedule(lim, r, s.NewID(wire.ScheduleIDPrefix), s.cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := AllowQueue(sc, "queue", sched.Queue); err != nil {
		return nil, err
	}
	// A repeat of a create its Idempotency-Key recorded is answered by
	// the record even if the schema changed since. (Should the record
	// expire before the apply, the schedule is stored unchecked; each of
	// its runs is still checked.)
	if _, err := s.schemaChecks(ns).check(sched.Queue, "payload", sched.Payload); err != nil && !s.replays(ctx, ns) {
		return nil, err
	}
	// Sealed after its check: the schema judges what the producer wrote.
	if err := s.sealSchedule(ns, sched); err != nil {
		return nil, err
	}
	c := &engine.ScheduleCmd{NS: ns, Sched: *sched, QueueNames: true}
	created, _, err := propose(ctx, s, ns, engine.ScheduleCreateFor(c), c, nil)
	if err != nil {
		return nil, err
	}
	return s.scheduleView(ns, created)
}

// UpdateSchedule replaces schedule ref (an id or a name) with r, every
// field: what r leaves out takes its default, as on a create. The
// schedule's history (created_at, last run, last job) stays; an enabled
// schedule's next run is computed afresh from now. Under a limited scope
// the schedule's queue and its new one must both be in it.
func (s *Service) UpdateSchedule(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, ref string, r *wire.ScheduleRequest) (*wire.Schedule, error) {
	cur, err := s.readSchedule(ns, sc, ref)
	if err != nil {
		return nil, err
	}
	if r.Name != cur.Name {
		if err := newScheduleName(r.Name); err != nil {
			return nil, err
		}
	}
	sched, err := toSchedule(lim, r, cur.ID, s.cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := AllowQueue(sc, "queue", sched.Queue); err != nil {
		return nil, err
	}
	if _, err := s.schemaChecks(ns).check(sched.Queue, "payload", sched.Payload); err != nil {
		return nil, err
	}
	// Sealed after its check: the schema judges what the producer wrote.
	if err := s.sealSchedule(ns, sched); err != nil {
		return nil, err
	}
	c := &engine.ScheduleCmd{NS: ns, Sched: *sched, QueueNames: true}
	return proposeSchedule(ctx, s, ns, engine.ScheduleUpdateFor(c), c)
}

// newScheduleName refuses a name a new or renamed schedule may not take:
// one that starts like an id, since every route takes a name in place of
// an id and tells them apart by the prefix.
func newScheduleName(name string) error {
	if strings.HasPrefix(name, wire.ScheduleIDPrefix) {
		return apierr.Field("name", "name must not start with %q, which marks schedule ids", wire.ScheduleIDPrefix)
	}
	return nil
}

// DeleteSchedule removes schedule ref (an id or a name). Jobs it already
// enqueued stay.
func (s *Service) DeleteSchedule(ctx context.Context, ns string, sc tenancy.QueueScope, ref string) error {
	id, err := s.scopedScheduleID(ns, sc, ref)
	if err != nil {
		return err
	}
	_, err = engine.ScheduleDelete.Propose(ctx, s.node, &engine.ScheduleIDCmd{NS: ns, ID: id})
	return err
}

// SetScheduleEnabled enables or disables schedule ref (an id or a name).
// Enabling computes the next run from now, so runs missed while disabled
// are not made up.
func (s *Service) SetScheduleEnabled(ctx context.Context, ns string, sc tenancy.QueueScope, ref string, on bool) (*wire.Schedule, error) {
	id, err := s.scopedScheduleID(ns, sc, ref)
	if err != nil {
		return nil, err
	}
	c := &engine.ScheduleIDCmd{NS: ns, ID: id}
	op := engine.ScheduleDisable
	if on {
		op = engine.ScheduleEnable
		cur, err := engine.ReadSchedule(s.node.DB(), ns, id)
		if err != nil {
			return nil, err
		}
		spec, err := parseCron(cur.Cron, cur.Timezone)
		if err != nil {
			return nil, fmt.Errorf("shard: stored schedule %s: %w", id, err)
		}
		c.NextRun = spec.next(s.now())
	}
	return proposeSchedule(ctx, s, ns, op, c)
}

// GetSchedule reads schedule ref (an id or a name) from local state.
func (s *Service) GetSchedule(ns string, sc tenancy.QueueScope, ref string) (*wire.Schedule, error) {
	sched, err := s.readSchedule(ns, sc, ref)
	if err != nil {
		return nil, err
	}
	return s.scheduleView(ns, sched)
}

// ListSchedules reads ns's schedules of queues in sc from local state,
// oldest first.
func (s *Service) ListSchedules(ns string, sc tenancy.QueueScope) ([]wire.Schedule, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	list, err := engine.ListSchedules(s.node.DB(), ns)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Schedule, 0, len(list))
	for _, sched := range list {
		if sc.Allows(sched.Queue) {
			v, err := s.scheduleView(ns, sched)
			if err != nil {
				return nil, err
			}
			out = append(out, *v)
		}
	}
	return out, nil
}

func proposeSchedule[C any](ctx context.Context, s *Service, ns string, op replica.Op[C, *engine.Schedule], c *C) (*wire.Schedule, error) {
	sc, err := op.Propose(ctx, s.node, c)
	if err != nil {
		return nil, err
	}
	return s.scheduleView(ns, sc)
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

// FireSchedule proposes the fire of schedule id for its run time at, as
// the leader's sweep found it due at now. It reports whether it fired: a
// schedule changed since its run index was read, or not due by the
// entry's clock, does not.
func (s *Service) FireSchedule(ctx context.Context, ns, id string, at, now int64) (bool, error) {
	sc, err := engine.ReadSchedule(s.node.DB(), ns, id)
	if err != nil || sc.NextRun != at {
		return false, nil // changed since the index was read
	}
	spec, err := parseCron(sc.Cron, sc.Timezone)
	if err != nil {
		// Stored specs were valid when stored; a zone that vanished from
		// tzdata cannot be fired, and must not block the other schedules.
		s.cfg.Logger.Warn("shard schedule: cannot parse stored schedule", "namespace", ns, "schedule", id, "err", err)
		return true, nil
	}
	c := &engine.FireCmd{NS: ns, ID: id, RunAt: at, NextRun: spec.next(max(now, at)), JobID: s.NewID("job_"), QueueDefaults: true,
		Trace: wire.NewTraceParent(), Checked: true} // each run starts a trace
	// The payload was checked when the schedule was stored; its queue's
	// schema may have changed since. A run whose payload fails it
	// enqueues nothing and says why on the schedule.
	plain, err := s.openValue(ns, fieldPayload, sc.Payload, sc.ID) // checked as written, not as sealed
	if err != nil {
		return false, err
	}
	c.Schema, err = s.schemaChecks(ns).check(sc.Queue, "payload", plain)
	var refused *apierr.Error
	switch {
	case errors.As(err, &refused) && refused.Code == apierr.BadRequest:
		c.Refused = refused.Message
	case err != nil:
		return false, err
	}
	return engine.ScheduleFireFor(c).Propose(ctx, s.node, c)
}

// RunSchedule enqueues schedule ref's job now, as a run of it would (the
// same queue, payload, priority, retries and unique key, the queue's
// defaults for what it leaves out, tagged with the schedule and the time
// of the run), without moving its own runs: a run by hand. Its queue must
// be in scope; the plan's max_pending_jobs holds.
func (s *Service) RunSchedule(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, ref string) (*wire.EnqueueResponse, error) {
	old, err := s.readSchedule(ns, sc, ref)
	if err != nil {
		return nil, err
	}
	if err := s.meter(ctx); err != nil {
		return nil, err
	}
	res, err := withSchemaRetry(ctx, func() ([]engine.EnqueueResult, error) {
		j := old.JobFor(s.NewID("job_"), s.now())
		j.SetTrace(wire.NewTraceParent(), "") // a run starts a trace, as the sweep's do
		checks := s.schemaChecks(ns)
		plain, err := s.openValue(ns, fieldPayload, old.Payload, old.ID) // checked as written, not as sealed
		if err != nil {
			return nil, err
		}
		v, err := checks.check(old.Queue, "payload", plain)
		if err != nil {
			return nil, err
		}
		if v != 0 {
			j.Schema = &job.Schema{Version: v}
		}
		c := &engine.EnqueueCmd{NS: ns, Jobs: [][]byte{j.Encode()}, Defaulted: []uint8{old.Defaulted()}, MaxPending: lim.MaxPendingJobs,
			Checked: checks.list}
		return engine.EnqueueFor(c, true).Propose(ctx, s.node, c)
	})
	if err != nil {
		return nil, err
	}
	out := enqueueResponse(res[0])
	return &out, nil
}
