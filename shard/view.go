package shard

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/jobbie/jobbie/shard/job"
)

// The JSON shapes of the seed protocol.

// FetchedJob is the body of a successful fetch.
type FetchedJob struct {
	JobID         string            `json:"job_id"`
	Queue         string            `json:"queue"`
	Payload       json.RawMessage   `json:"payload"`
	Attempt       int               `json:"attempt"`
	MaxRetries    int               `json:"max_retries"`
	LeaseDuration float64           `json:"lease_duration"`
	Checkpoint    json.RawMessage   `json:"checkpoint"`
	Tags          map[string]string `json:"tags"`
}

func fetchedView(j *job.Job) *FetchedJob {
	return &FetchedJob{
		JobID: j.ID, Queue: j.Queue, Payload: j.Payload, Attempt: j.Attempt, MaxRetries: j.MaxRetries,
		LeaseDuration: time.Duration(j.LeaseNs).Seconds(), Checkpoint: nullable(j.Checkpoint), Tags: j.Tags,
	}
}

// JobDetail is the full view of GET /api/v1/jobs/{id}.
type JobDetail struct {
	ID             string            `json:"id"`
	Queue          string            `json:"queue"`
	Payload        json.RawMessage   `json:"payload"`
	State          string            `json:"state"`
	Priority       string            `json:"priority"`
	Attempt        int               `json:"attempt"`
	MaxRetries     int               `json:"max_retries"`
	RetryBackoff   string            `json:"retry_backoff"`
	RetryBaseDelay string            `json:"retry_base_delay"`
	RetryMaxDelay  string            `json:"retry_max_delay"`
	CreatedAt      *time.Time        `json:"created_at"`
	ScheduledAt    *time.Time        `json:"scheduled_at"`
	StartedAt      *time.Time        `json:"started_at"`
	CompletedAt    *time.Time        `json:"completed_at"`
	FailedAt       *time.Time        `json:"failed_at"`
	NextAttemptAt  *time.Time        `json:"next_attempt_at"`
	LeaseExpiresAt *time.Time        `json:"lease_expires_at"`
	ExpireAfter    *string           `json:"expire_after"`
	ExpiresAt      *time.Time        `json:"expires_at"`
	UniqueKey      *string           `json:"unique_key"`
	UniquePeriod   *int64            `json:"unique_period"`
	BatchID        *string           `json:"batch_id"`
	ChainID        *string           `json:"chain_id"`
	ChainStep      *int              `json:"chain_step"`
	DependsOn      []string          `json:"depends_on,omitempty"`
	CancelReason   *string           `json:"cancel_reason,omitempty"`
	Tags           map[string]string `json:"tags"`
	Progress       json.RawMessage   `json:"progress"`
	Checkpoint     json.RawMessage   `json:"checkpoint"`
	Result         json.RawMessage   `json:"result"`
	Errors         []ErrorView       `json:"errors"`
	Worker         *WorkerView       `json:"worker"`
	DeadReason     *string           `json:"dead_reason,omitempty"`
	UpdatedAt      *time.Time        `json:"updated_at"`
	Cancelling     bool              `json:"cancelling,omitempty"` // active, cancel requested
	CancelledAt    *time.Time        `json:"cancelled_at,omitempty"`
	DiedAt         *time.Time        `json:"died_at,omitempty"`
	Timeline       []TimelineEvent   `json:"timeline"`
}

// ErrorView is one failed attempt.
type ErrorView struct {
	Attempt   int       `json:"attempt"`
	Error     string    `json:"error"`
	Backtrace string    `json:"backtrace,omitempty"`
	At        time.Time `json:"at"`
}

// WorkerView names the worker of the current or last attempt.
type WorkerView struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
}

func detailView(j *job.Job) *JobDetail {
	d := &JobDetail{
		ID: j.ID, Queue: j.Queue, Payload: j.Payload, State: j.State.String(), Priority: j.Priority.String(),
		Attempt: j.Attempt, MaxRetries: j.MaxRetries, RetryBackoff: j.Backoff,
		RetryBaseDelay: fmtDuration(time.Duration(j.BaseDelay)), RetryMaxDelay: fmtDuration(time.Duration(j.MaxDelay)),
		CreatedAt: ts(j.CreatedAt), ScheduledAt: ts(j.ScheduledAt), StartedAt: ts(j.StartedAt),
		CompletedAt: ts(j.CompletedAt), FailedAt: ts(j.FailedAt), ExpiresAt: ts(j.ExpireAt), UpdatedAt: ts(j.UpdatedAt),
		Tags: j.Tags, Progress: nullable(j.Progress), Checkpoint: nullable(j.Checkpoint), Result: nullable(j.Result),
		Errors: make([]ErrorView, 0, len(j.Errors)),
	}
	if j.State == job.Retrying {
		d.NextAttemptAt = ts(j.NextAttempt)
	}
	if j.State == job.Active {
		d.LeaseExpiresAt = ts(j.LeaseUntil)
	}
	if j.ExpireAfter > 0 {
		s := fmtDuration(time.Duration(j.ExpireAfter))
		d.ExpireAfter = &s
	}
	if j.UniqueKey != "" {
		d.UniqueKey = &j.UniqueKey
		if j.UniqueUntil > 0 {
			p := (j.UniqueUntil - j.CreatedAt) / int64(time.Second)
			d.UniquePeriod = &p
		}
	}
	for _, e := range j.Errors {
		d.Errors = append(d.Errors, ErrorView{Attempt: e.Attempt, Error: e.Error, Backtrace: e.Backtrace, At: time.Unix(0, e.At).UTC()})
	}
	if j.WorkerID != "" || j.Hostname != "" {
		d.Worker = &WorkerView{ID: j.WorkerID, Hostname: j.Hostname}
	}
	if j.DeadReason != "" {
		d.DeadReason = &j.DeadReason
	}
	d.Cancelling = j.State == job.Active && j.CancelRequestedAt != 0
	d.CancelledAt, d.DiedAt = ts(j.CancelledAt), ts(j.DeadAt)
	d.Timeline = timelineView(j)
	flowView(d, j)
	return d
}

func ts(ns int64) *time.Time {
	if ns == 0 {
		return nil
	}
	t := time.Unix(0, ns).UTC()
	return &t
}

func nullable(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// fmtDuration prints durations the way producers write them: "10m", not "10m0s".
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
