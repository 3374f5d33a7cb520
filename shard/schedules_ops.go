package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
)

const maxScheduleName = 128

// ScheduleRequest is the body of a schedule create or full update. Absent
// fields take their defaults on update too: PUT replaces the schedule.
type ScheduleRequest struct {
	Name       string          `json:"name"`
	Queue      string          `json:"queue"`
	Cron       string          `json:"cron"`
	Timezone   string          `json:"timezone"` // default "UTC"
	Payload    json.RawMessage `json:"payload"`
	Priority   string          `json:"priority"`
	UniqueKey  string          `json:"unique_key"`
	MaxRetries *int            `json:"max_retries"` // default 3
	Enabled    *bool           `json:"enabled"`     // default true
}

// toSchedule validates r and builds the record to propose, with its next
// run after now when enabled.
func (r *ScheduleRequest) toSchedule(id string, now time.Time) (*schedule, error) {
	if err := validScheduleName(r.Name); err != nil {
		return nil, err
	}
	if err := tenancy.ValidateQueue(r.Queue); err != nil {
		if r.Queue == "" {
			return nil, apierr.Field("queue", "queue is required")
		}
		return nil, apierr.Field("queue", "%v", err)
	}
	s := &schedule{ID: id, Name: r.Name, Queue: r.Queue, Cron: strings.TrimSpace(r.Cron), Timezone: r.Timezone,
		MaxRetries: job.DefaultMaxRetries, Enabled: true}
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	spec, err := parseCron(s.Cron, s.Timezone)
	if err != nil {
		return nil, err
	}
	if spec.next(now.UnixNano()) == 0 {
		return nil, apierr.Field("cron", "cron expression %q never matches a future time", s.Cron)
	}
	if s.Payload, err = schedulePayload(r.Payload); err != nil {
		return nil, err
	}
	if s.Priority, err = job.ParsePriority(r.Priority); err != nil {
		return nil, apierr.Field("priority", "%v", err)
	}
	if len(r.UniqueKey) > maxUniqueKey || strings.ContainsRune(r.UniqueKey, 0) {
		return nil, apierr.Field("unique_key", "unique_key must be at most %d bytes without NUL", maxUniqueKey)
	}
	s.UniqueKey = r.UniqueKey
	if r.MaxRetries != nil {
		if *r.MaxRetries < 0 || *r.MaxRetries > maxMaxRetries {
			return nil, apierr.Field("max_retries", "max_retries must be between 0 and %d", maxMaxRetries)
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
	if len(name) > maxScheduleName {
		return apierr.Field("name", "name must be at most %d bytes", maxScheduleName)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return apierr.Field("name", "name must not contain control characters")
	}
	return nil
}

func schedulePayload(raw json.RawMessage) ([]byte, error) {
	p := bytes.TrimSpace(raw)
	if len(p) > MaxPayloadBytes {
		return nil, &apierr.Error{Code: apierr.TooLarge, Field: "payload", Message: fmt.Sprintf("payload is %d bytes; the limit is %d", len(p), MaxPayloadBytes)}
	}
	if len(p) == 0 {
		return []byte("null"), nil
	}
	return p, nil
}

// CreateSchedule validates and stores a new schedule.
func (e *Engine) CreateSchedule(ctx context.Context, ns string, r *ScheduleRequest) (*schedule, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	s, err := r.toSchedule(e.newID("sch_"), time.Now())
	if err != nil {
		return nil, err
	}
	return e.proposeSchedule(ctx, cmdScheduleCreate, &scheduleCmd{NS: ns, Sched: *s})
}

// UpdateSchedule replaces schedule id; an enabled schedule's next run is
// computed afresh from now.
func (e *Engine) UpdateSchedule(ctx context.Context, ns, id string, r *ScheduleRequest) (*schedule, error) {
	if err := scheduleRef(ns, id); err != nil {
		return nil, err
	}
	s, err := r.toSchedule(id, time.Now())
	if err != nil {
		return nil, err
	}
	return e.proposeSchedule(ctx, cmdScheduleUpdate, &scheduleCmd{NS: ns, Sched: *s})
}

// DeleteSchedule removes schedule id. Jobs it already enqueued stay.
func (e *Engine) DeleteSchedule(ctx context.Context, ns, id string) error {
	if err := scheduleRef(ns, id); err != nil {
		return err
	}
	_, err := e.propose(ctx, cmdScheduleDelete, &scheduleIDCmd{NS: ns, ID: id})
	return err
}

// SetScheduleEnabled enables or disables schedule id. Enabling computes the
// next run from now, so runs missed while disabled are not made up.
func (e *Engine) SetScheduleEnabled(ctx context.Context, ns, id string, on bool) (*schedule, error) {
	if err := scheduleRef(ns, id); err != nil {
		return nil, err
	}
	c := &scheduleIDCmd{NS: ns, ID: id}
	t := cmdScheduleDisable
	if on {
		t = cmdScheduleEnable
		cur, err := getSchedule(e.node.DB(), ns, id)
		if err != nil {
			return nil, err
		}
		spec, err := parseCron(cur.Cron, cur.Timezone)
		if err != nil {
			return nil, fmt.Errorf("shard: stored schedule %s: %w", id, err)
		}
		c.NextRun = spec.next(time.Now().UnixNano())
	}
	return e.proposeSchedule(ctx, t, c)
}

// GetSchedule reads a schedule from local state.
func (e *Engine) GetSchedule(ns, id string) (*schedule, error) {
	if err := scheduleRef(ns, id); err != nil {
		return nil, err
	}
	return getSchedule(e.node.DB(), ns, id)
}

// ListSchedules reads ns's schedules from local state.
func (e *Engine) ListSchedules(ns string) ([]*schedule, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	return listSchedules(e.node.DB(), ns)
}

func (e *Engine) proposeSchedule(ctx context.Context, t replica.CommandType, c any) (*schedule, error) {
	res, err := e.propose(ctx, t, c)
	if err != nil {
		return nil, err
	}
	return res.(*schedule), nil
}

// scheduleRef checks the namespace and the shape of a schedule id; an id of
// the wrong shape is simply not found.
func scheduleRef(ns, id string) error {
	if err := namespaceOK(ns); err != nil {
		return err
	}
	if len(id) != keys.ScheduleIDLen || !strings.HasPrefix(id, "sch_") {
		return apierr.New(apierr.NotFound, "schedule %q not found", id)
	}
	return nil
}
