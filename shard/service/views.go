package service

import (
	"encoding/json"
	"time"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// The wire shapes of stored records: every answer is built here.

func fetchedView(j *job.Job) wire.FetchedJob {
	return wire.FetchedJob{
		JobID: j.ID, Queue: j.Queue, Payload: j.Payload, Attempt: j.Attempt, MaxRetries: j.MaxRetries,
		LeaseDuration: time.Duration(j.LeaseNs).Seconds(), Checkpoint: nullable(j.Checkpoint), Tags: j.Tags,
		LeaseToken: job.LeaseOf(j).Token(), TraceParent: j.TraceParent(), TraceState: j.TraceState(),
	}
}

func detailView(j *job.Job) *wire.JobDetail {
	d := &wire.JobDetail{
		ID: j.ID, Queue: j.Queue, Payload: j.Payload, State: j.State.String(), Priority: j.Priority.String(),
		Attempt: j.Attempt, MaxRetries: j.MaxRetries, RetryBackoff: j.Backoff,
		RetryBaseDelay: wire.FormatDuration(time.Duration(j.BaseDelay)), RetryMaxDelay: wire.FormatDuration(time.Duration(j.MaxDelay)),
		CreatedAt: ts(j.CreatedAt), ScheduledAt: ts(j.ScheduledAt), StartedAt: ts(j.StartedAt),
		CompletedAt: ts(j.CompletedAt), FailedAt: ts(j.FailedAt), ExpiresAt: ts(j.ExpireAt), UpdatedAt: ts(j.UpdatedAt),
		Tags: j.Tags, Progress: nullable(j.Progress), Checkpoint: nullable(j.Checkpoint), Result: nullable(j.Result),
		Errors: make([]wire.JobError, 0, len(j.Errors)), TraceParent: j.TraceParent(), TraceState: j.TraceState(),
		SchemaVersion: int64(j.SchemaVersion()),
	}
	if j.State == job.Retrying {
		d.NextAttemptAt = ts(j.NextAttempt)
	}
	if j.State == job.Active {
		d.LeaseExpiresAt = ts(j.LeaseUntil)
	}
	if j.ExpireAfter > 0 {
		s := wire.FormatDuration(time.Duration(j.ExpireAfter))
		d.ExpireAfter = &s
	}
	if j.OwnLeaseNs > 0 {
		s := wire.FormatDuration(time.Duration(j.OwnLeaseNs))
		d.LeaseDuration = &s
	}
	if j.UniqueKey != "" {
		d.UniqueKey = &j.UniqueKey
		if j.UniqueUntil > 0 {
			p := (j.UniqueUntil - j.CreatedAt) / int64(time.Second)
			d.UniquePeriod = &p
		}
	}
	if k := j.Keys; k != nil && k.Concurrency != "" {
		d.ConcurrencyKey = &k.Concurrency
	}
	if k := j.Keys; k != nil && k.Fairness != "" {
		d.FairnessKey = &k.Fairness
	}
	for _, e := range j.Errors {
		d.Errors = append(d.Errors, wire.JobError{Attempt: e.Attempt, Error: e.Error, Backtrace: e.Backtrace, At: time.Unix(0, e.At).UTC()})
	}
	if j.WorkerID != "" || j.Hostname != "" {
		d.Worker = &wire.WorkerRef{ID: j.WorkerID, Hostname: j.Hostname}
	}
	if j.DeadReason != "" {
		d.DeadReason = &j.DeadReason
	}
	d.Cancelling = j.State == job.Active && j.CancelRequestedAt != 0
	d.CancelledAt, d.DiedAt = ts(j.CancelledAt), ts(j.DeadAt)
	d.Timeline = make([]wire.TimelineEvent, len(j.Timeline))
	for i, ev := range j.Timeline {
		d.Timeline[i] = wire.TimelineEvent{At: time.Unix(0, ev.At).UTC(), Event: ev.Kind.String(), Detail: ev.Detail}
	}
	// Flows: batch, chain and dependencies.
	if j.BatchID != "" {
		d.BatchID = &j.BatchID
	}
	if j.ChainID != "" {
		d.ChainID, d.ChainStep = &j.ChainID, &j.ChainStep
	}
	d.DependsOn = j.DependsOn
	if j.CancelReason != "" {
		d.CancelReason = &j.CancelReason
	}
	return d
}

func deadView(j *job.Job) wire.DeadJob {
	d := wire.DeadJob{ID: j.ID, Queue: j.Queue, State: j.State.String(), Payload: nullable(j.Payload),
		CreatedAt: ts(j.CreatedAt), DiedAt: ts(j.DeadAt), Attempt: j.Attempt, MaxRetries: j.MaxRetries,
		DeadReason: j.DeadReason, Tags: j.Tags}
	if n := len(j.Errors); n > 0 {
		d.LastError = &j.Errors[n-1].Error
	}
	return d
}

func batchView(b *engine.BatchRecord) *wire.Batch {
	v := &wire.Batch{ID: b.ID, Total: b.Total, Pending: b.Pending, Succeeded: b.Succeeded, Failed: b.Failed,
		CallbackQueue: b.CallbackQueue, CreatedAt: ts(b.CreatedAt), CompletedAt: ts(b.CompletedAt)}
	if b.CallbackJobID != "" {
		v.CallbackJobID = &b.CallbackJobID
	}
	return v
}

// scheduleView is s as the API shows it; a schedule that left max_retries
// out shows what its next job would take, its queue's default as ns's
// node has it now.
func (svc *Service) scheduleView(ns string, s *engine.Schedule) (*wire.Schedule, error) {
	payload, err := svc.openValue(ns, fieldPayload, s.Payload, s.ID)
	if err != nil {
		return nil, jobValueError(s.ID, fieldPayload, err)
	}
	v := &wire.Schedule{
		ID: s.ID, Name: s.Name, Queue: s.Queue, Cron: s.Cron, Timezone: s.Timezone,
		Payload: nullable(payload), Priority: s.Priority.String(), MaxRetries: s.MaxRetries, Enabled: s.Enabled,
		NextRun: ts(s.NextRun), LastRun: ts(s.LastRun), CreatedAt: ts(s.CreatedAt), UpdatedAt: ts(s.UpdatedAt),
		MaxRetriesDefault: s.DefaultRetries,
	}
	if s.DefaultRetries {
		if q, ok := engine.ReadQueue(svc.node.DB(), ns, s.Queue); ok && q.Defaults != nil && q.Defaults.MaxRetries != nil {
			v.MaxRetries = *q.Defaults.MaxRetries
		}
	}
	if s.UniqueKey != "" {
		v.UniqueKey = &s.UniqueKey
	}
	if s.Refused != "" {
		v.LastRunRefused = &s.Refused
	}
	if s.LastJobID != "" {
		v.LastJobID = &s.LastJobID
	}
	return v, nil
}

func opView(op *engine.BulkOp) *wire.BulkOperation {
	return &wire.BulkOperation{ID: op.ID, Action: op.Action, Status: op.Status, Total: op.Total, Processed: op.Processed,
		Affected: op.Affected, Skipped: op.Skipped, Errors: op.Errors, CreatedAt: ts(op.CreatedAt),
		FinishedAt: ts(op.FinishedAt), ProgressURL: "/api/v1/bulk/" + op.ID + "/progress"}
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
