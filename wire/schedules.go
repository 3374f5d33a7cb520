package wire

import (
	"encoding/json"
	"time"
)

// ScheduleIDPrefix starts every schedule id ("sch_" and a ULID). Every
// /api/v1/schedules/{id} route takes a schedule's name in place of its id
// and tells them apart by this prefix, so a name may not start with it.
const ScheduleIDPrefix = "sch_"

// CodeAmbiguousName (409) answers a reference by name that names
// schedules of more than one queue the caller may see: names are unique
// per queue, so the message names those queues and asks for the id.
const CodeAmbiguousName ErrorCode = "ambiguous_name"

// ScheduleRequest is the body of a schedule's create (POST
// /api/v1/schedules) and full replace (PUT /api/v1/schedules/{id}):
// absent fields take their defaults on a replace too. A name another
// schedule of the same queue has is a 409 naming "name".
type ScheduleRequest struct {
	Name       string          `json:"name"` // unique in its queue
	Queue      string          `json:"queue"`
	Cron       string          `json:"cron"`               // 5 fields, or "@hourly", "@every 90s"…
	Timezone   string          `json:"timezone,omitempty"` // IANA; default "UTC"
	Payload    json.RawMessage `json:"payload,omitempty"`
	Priority   string          `json:"priority,omitempty"`
	UniqueKey  string          `json:"unique_key,omitempty"`
	MaxRetries *int            `json:"max_retries,omitempty"` // default: the queue's (3 when it has none)
	Enabled    *bool           `json:"enabled,omitempty"`     // default true
}

// Schedule is a stored cron schedule. NextRun is null while it is
// disabled; LastRun and LastJobID are null until it first fires.
// MaxRetriesDefault is true when the schedule left max_retries out: its
// jobs take their queue's default, which MaxRetries shows as it is now.
type Schedule struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Queue      string          `json:"queue"`
	Cron       string          `json:"cron"`
	Timezone   string          `json:"timezone"`
	Payload    json.RawMessage `json:"payload"`
	Priority   string          `json:"priority"`
	UniqueKey  *string         `json:"unique_key"`
	MaxRetries int             `json:"max_retries"`
	Enabled    bool            `json:"enabled"`
	NextRun    *time.Time      `json:"next_run"`
	LastRun    *time.Time      `json:"last_run"`
	LastJobID  *string         `json:"last_job_id"`
	CreatedAt  *time.Time      `json:"created_at"`
	UpdatedAt  *time.Time      `json:"updated_at"`

	MaxRetriesDefault bool `json:"max_retries_default"`

	// LastRunRefused says why the last run enqueued no job: its payload
	// failed its queue's schema, changed since the schedule was stored
	// (the run is used up; the next one is checked again). Omitted after
	// a run that enqueued.
	LastRunRefused *string `json:"last_run_refused,omitempty"`
}

// ScheduleList is GET /api/v1/schedules, oldest first.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
}

// SchedulePreviewRequest is POST /api/v1/schedules/preview: the next runs
// of a cron expression, checked as a schedule's create checks it (a bad
// one is a 400 naming "cron" or "timezone"). Nothing is stored.
type SchedulePreviewRequest struct {
	Cron     string `json:"cron"`
	Timezone string `json:"timezone,omitempty"` // IANA; default "UTC"
	Count    *int   `json:"count,omitempty"`    // 1..MaxSchedulePreview; default DefaultSchedulePreview
}

// SchedulePreview is the answer to POST /api/v1/schedules/preview.
// NextRuns are strictly after the server's now, in the time zone (so
// each carries that zone's offset at the time), oldest first; fewer than
// asked, even none, when the expression stops matching.
type SchedulePreview struct {
	Cron     string      `json:"cron"`
	Timezone string      `json:"timezone"`
	NextRuns []time.Time `json:"next_runs"`
}

// How many runs a preview lists.
const (
	DefaultSchedulePreview = 5
	MaxSchedulePreview     = 50
)

// Tags on every job a schedule enqueues: which schedule, and the run time
// it fired for (RFC 3339, UTC).
const (
	TagScheduleID  = "jobbie.schedule_id"
	TagScheduleRun = "jobbie.run_at"
)

// ReservedTagPrefix starts the tags only the server sets (TagScheduleID,
// TagScheduleRun): a producer's job may not carry one, so a tag with it
// is always the server's word. Searches may name them.
const ReservedTagPrefix = "jobbie."
