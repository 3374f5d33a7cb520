package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// ScheduleRequest describes a cron schedule: every time Cron matches in
// Timezone, the server enqueues one job with Payload on Queue. It is the
// body of both create and update; an update replaces the whole schedule,
// so zero fields take the server's defaults there too.
type ScheduleRequest struct {
	// Name is unique in its queue (two queues may each have a schedule
	// of one name), 1-128 bytes, not starting with "sch_" (ids do).
	Name  string
	Queue string
	// Cron is a standard 5-field expression ("0 9 * * 1-5") or a
	// descriptor ("@hourly", "@every 90s").
	Cron string
	// Timezone is an IANA zone name; empty means UTC.
	Timezone string
	// Payload is any JSON-encodable value; pass json.RawMessage to send
	// bytes that are already JSON.
	Payload   any
	Priority  Priority
	UniqueKey string
	// MaxRetries is nil for the queue's default when each job is
	// enqueued (3 when it has none); new(0) means never retry.
	MaxRetries *int
	// Enabled is nil for enabled.
	Enabled *bool
}

// MarshalJSON writes the request as a wire.ScheduleRequest.
func (r ScheduleRequest) MarshalJSON() ([]byte, error) {
	payload, err := marshalRaw(r.Payload)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	return json.Marshal(wire.ScheduleRequest{
		Name: r.Name, Queue: r.Queue, Cron: r.Cron, Timezone: r.Timezone, Payload: payload,
		Priority: r.Priority, UniqueKey: r.UniqueKey, MaxRetries: r.MaxRetries, Enabled: r.Enabled,
	})
}

// Schedule is a stored cron schedule. NextRun is nil while it is disabled;
// LastRun and LastJobID are nil until it first fires.
type Schedule = wire.Schedule

// ListSchedules lists the namespace's schedules, oldest first.
func (c *Client) ListSchedules(ctx context.Context) ([]Schedule, error) {
	var out wire.ScheduleList
	if _, err := c.do(ctx, "GET", "/api/v1/schedules", nil, &out); err != nil {
		return nil, err
	}
	return out.Schedules, nil
}

// CreateSchedule stores a new schedule.
func (c *Client) CreateSchedule(ctx context.Context, req ScheduleRequest) (*Schedule, error) {
	return c.scheduleCall(ctx, "POST", "/api/v1/schedules", req)
}

// CodeAmbiguousName is the code of a 409 answering a schedule's name
// that schedules of several queues have: refer to one by its id.
const CodeAmbiguousName = string(wire.CodeAmbiguousName)

// GetSchedule reads one schedule, by its id ("sch_…") or its name: a
// reference without the id prefix (wire.ScheduleIDPrefix) is a name. The
// other schedule methods take a name in place of an id too. A name that
// schedules of several queues have is an error of code
// CodeAmbiguousName.
func (c *Client) GetSchedule(ctx context.Context, ref string) (*Schedule, error) {
	return c.scheduleCall(ctx, "GET", schedulePath(ref), nil)
}

// UpdateSchedule replaces schedule id with req; its next run is computed
// afresh.
func (c *Client) UpdateSchedule(ctx context.Context, id string, req ScheduleRequest) (*Schedule, error) {
	return c.scheduleCall(ctx, "PUT", schedulePath(id), req)
}

// DeleteSchedule removes schedule id. Jobs it already enqueued stay.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", schedulePath(id), nil, nil)
	return err
}

// EnableSchedule makes schedule id fire again from its next run after now.
func (c *Client) EnableSchedule(ctx context.Context, id string) (*Schedule, error) {
	return c.scheduleCall(ctx, "POST", schedulePath(id)+"/enable", nil)
}

// DisableSchedule stops schedule id from firing until it is enabled.
func (c *Client) DisableSchedule(ctx context.Context, id string) (*Schedule, error) {
	return c.scheduleCall(ctx, "POST", schedulePath(id)+"/disable", nil)
}

// RunSchedule runs schedule id by hand: it enqueues the schedule's job
// now, as a run would, without moving the schedule's own runs (a unique
// key still held answers the unfinished job).
func (c *Client) RunSchedule(ctx context.Context, id string) (*EnqueueResult, error) {
	var out EnqueueResult
	if _, err := c.do(ctx, "POST", schedulePath(id)+"/run", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) scheduleCall(ctx context.Context, method, path string, in any) (*Schedule, error) {
	var out Schedule
	if _, err := c.do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func schedulePath(id string) string { return "/api/v1/schedules/" + url.PathEscape(id) }
