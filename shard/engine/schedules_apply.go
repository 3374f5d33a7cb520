package engine

import (
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// ScheduleCmd creates or fully replaces a schedule. The proposer validated
// it, gave a new schedule its id and computed NextRun from its clock; the
// handler checks what depends on state (name taken, schedule exists) and
// stamps times from the entry.
type ScheduleCmd struct {
	NS    string   `codec:"ns"`
	Sched Schedule `codec:"s"`
	// QueueNames: the name must be free in the schedule's queue only.
	// Without it (every command logged before it) the name must be free
	// in the whole namespace. Proposed under numbers of its own
	// (versions.go), as an older node would drop it.
	QueueNames bool `codec:"qn,omitempty"`
}

// ScheduleIDCmd names one schedule. NextRun is set by the proposer of an
// enable: the first run after the moment it was enabled.
type ScheduleIDCmd struct {
	NS      string `codec:"ns"`
	ID      string `codec:"id"`
	NextRun int64  `codec:"nr"`
}

// FireCmd fires one schedule for the run time RunAt. The leader found the
// schedule due, made the job's id and computed the run after this one. The
// handler fires only while the stored NextRun still equals RunAt, so a
// repeated or stale fire (a retried proposal, a deposed leader's sweep)
// changes nothing: each run time enqueues at most one job.
type FireCmd struct {
	NS      string `codec:"ns"`
	ID      string `codec:"id"`
	RunAt   int64  `codec:"at"`
	NextRun int64  `codec:"nr"` // 0 = the expression has no further run
	JobID   string `codec:"j"`
	// QueueDefaults: the job takes its queue's defaults for what the
	// schedule does not set (retry backoff, delays, expire_after, and
	// max_retries when the schedule left it out, Schedule.DefaultRetries),
	// as an enqueue that leaves them out does. Fires logged before it
	// lack it and keep the built-in values they applied with.
	QueueDefaults bool `codec:"qd,omitempty"`
	// Trace is the traceparent of the trace the job starts: made by the
	// proposer (the leader's sweep), as an apply may not draw random
	// numbers. Fires logged before it lack it and enqueue no trace;
	// proposed under a number of its own (versions.go).
	Trace string `codec:"tp,omitempty"`
	// Checked: the proposer checked the schedule's payload against the
	// version Schema of its queue's schema (0: none). Refused says why
	// the payload failed it: the run is used up and enqueues nothing.
	// The apply fires only while that version is in force, so a schema
	// changed since is checked again by the next sweep. Fires logged
	// before them lack them; proposed under ScheduleFireSchema.
	Checked bool   `codec:"ck,omitempty"`
	Schema  uint32 `codec:"sv,omitempty"`
	Refused string `codec:"rf,omitempty"`
}

// Tags on every job a schedule enqueues: which schedule, and the run time
// it fired for (RFC 3339, UTC), so a job can be traced to its run.
const (
	TagScheduleID  = "jobbie.schedule_id"
	TagScheduleRun = "jobbie.run_at"
)

// nameTaken is the 409 of a schedule name another schedule holds (of
// the queue, or of the namespace under the older commands), naming the
// field.
func nameTaken(s *Schedule, perQueue bool) error {
	if perQueue {
		return apierr.OfField(apierr.Conflict, "name", "queue %s already has a schedule named %q", s.Queue, s.Name)
	}
	return apierr.OfField(apierr.Conflict, "name", "a schedule named %q already exists", s.Name)
}

// applyScheduleCreate stores a new schedule; its name must be free.
func (e *Engine) applyScheduleCreate(tx *replica.Tx, c *ScheduleCmd) (*Schedule, error) {
	s := c.Sched
	if nameHeld(tx, c.NS, &s, "", c.QueueNames) {
		return nil, nameTaken(&s, c.QueueNames)
	}
	if _, err := ReadSchedule(tx, c.NS, s.ID); err == nil {
		return nil, apierr.New(apierr.Conflict, "schedule %s already exists", s.ID)
	}
	registerNamespace(tx, c.NS) // the sweep looks for due schedules per namespace
	s.CreatedAt = tx.Now.UnixNano()
	s.LastRun, s.LastJobID = 0, ""
	e.putSchedule(tx, c.NS, nil, &s)
	return &s, nil
}

// applyScheduleUpdate replaces what a user sets; the history (created_at,
// last run, last job) stays.
func (e *Engine) applyScheduleUpdate(tx *replica.Tx, c *ScheduleCmd) (*Schedule, error) {
	old, err := ReadSchedule(tx, c.NS, c.Sched.ID)
	if err != nil {
		return nil, err
	}
	s := c.Sched
	if nameHeld(tx, c.NS, &s, s.ID, c.QueueNames) {
		return nil, nameTaken(&s, c.QueueNames)
	}
	s.CreatedAt, s.LastRun, s.LastJobID = old.CreatedAt, old.LastRun, old.LastJobID
	e.putSchedule(tx, c.NS, old, &s)
	return &s, nil
}

// applyScheduleDelete removes a schedule; jobs it enqueued stay.
func (e *Engine) applyScheduleDelete(tx *replica.Tx, c *ScheduleIDCmd) (replica.None, error) {
	s, err := ReadSchedule(tx, c.NS, c.ID)
	if err != nil {
		return replica.None{}, err
	}
	e.deleteSchedule(tx, c.NS, s)
	return replica.None{}, nil
}

// applyScheduleEnabled enables or disables a schedule. Enabling one that is
// already enabled keeps its next run, so a repeated enable does not move it;
// a disabled schedule has no next run and never fires.
func (e *Engine) applyScheduleEnabled(tx *replica.Tx, c *ScheduleIDCmd, on bool) (*Schedule, error) {
	old, err := ReadSchedule(tx, c.NS, c.ID)
	if err != nil {
		return nil, err
	}
	if old.Enabled == on {
		return old, nil
	}
	s := *old
	s.Enabled = on
	s.NextRun = 0
	if on {
		s.NextRun = c.NextRun
	}
	e.putSchedule(tx, c.NS, old, &s)
	return &s, nil
}

// JobFor is the job a run of the schedule at runAt enqueues, with id: its
// queue, payload, priority, retries and unique key, tagged with the
// schedule and the run. Fields the schedule leaves to its queue are in
// Defaulted.
func (sc *Schedule) JobFor(id string, runAt int64) *job.Job {
	return &job.Job{
		ID: id, Queue: sc.Queue, Payload: sc.Payload, Priority: sc.Priority,
		MaxRetries: sc.MaxRetries, Backoff: job.DefaultBackoff,
		BaseDelay: int64(job.DefaultBaseDelay), MaxDelay: int64(job.DefaultMaxDelay),
		UniqueKey: sc.UniqueKey,
		Tags:      map[string]string{TagScheduleID: sc.ID, TagScheduleRun: time.Unix(0, runAt).UTC().Format(time.RFC3339Nano)},
	}
}

// Defaulted is the Def* bits of a job of the schedule (JobFor): what
// takes the queue's defaults.
func (sc *Schedule) Defaulted() uint8 {
	mask := DefBackoff | DefBaseDelay | DefMaxDelay | DefExpireAfter
	if sc.DefaultRetries {
		mask |= DefMaxRetries
	}
	return mask
}

// applyScheduleFire enqueues the schedule's job for run time RunAt through
// the enqueue command's own apply (indexes, counts, unique keys, waking
// workers), then records the run and moves to the next. It returns whether
// it fired.
func (e *Engine) applyScheduleFire(tx *replica.Tx, c *FireCmd) (bool, error) {
	if restoring(tx, c.NS) {
		return false, nil // proposed before a restore began
	}
	old, err := ReadSchedule(tx, c.NS, c.ID)
	switch {
	case err != nil, !old.Enabled, old.NextRun != c.RunAt:
		return false, nil // deleted, disabled, or this run was already fired or replaced
	case c.RunAt > tx.Now.UnixNano():
		return false, nil // not due by the entry's clock
	case c.NextRun != 0 && c.NextRun <= c.RunAt:
		return false, nil // a next run that does not advance would fire forever
	case c.Checked && e.queues.get(tx, c.NS, old.Queue).Schema != c.Schema:
		return false, nil // its queue's schema changed since the check: the next sweep checks again
	}
	if c.Refused != "" {
		s := *old
		s.LastRun, s.LastJobID, s.NextRun, s.Refused = c.RunAt, "", c.NextRun, c.Refused
		e.putSchedule(tx, c.NS, old, &s)
		e.logEvent(tx, c.NS, Event{Type: EvScheduleFired, Subject: s.ID, Queue: s.Queue, Detail: s.Name})
		return true, nil
	}
	j := old.JobFor(c.JobID, c.RunAt)
	j.SetTrace(c.Trace, "")
	if c.Schema != 0 {
		j.Schema = &job.Schema{Version: c.Schema}
	}
	ec := &EnqueueCmd{NS: c.NS, Jobs: [][]byte{j.Encode()}}
	if c.QueueDefaults {
		ec.Defaulted = []uint8{old.Defaulted()}
	}
	res, err := e.enqueue(tx, ec, false)
	must(err) // without dependencies, a quota or budgets, an enqueue refuses nothing
	s := *old
	// With a unique key still held by an unfinished job, the run enqueues
	// nothing and last_job_id names the job that holds the key.
	s.LastRun, s.LastJobID, s.NextRun, s.Refused = c.RunAt, res[0].JobID, c.NextRun, ""
	e.putSchedule(tx, c.NS, old, &s)
	e.logEvent(tx, c.NS, Event{Type: EvScheduleFired, Subject: s.ID, Queue: s.Queue, JobID: res[0].JobID, Detail: s.Name})
	return true, nil
}
