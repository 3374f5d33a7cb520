package engine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// Every job keeps its timeline in its record (job.Job.Timeline), bounded
// to job.MaxTimeline events, so it costs no extra key and is written with
// the record each transition writes anyway. timelineObserver records what
// a state change says; commands record what no state change shows
// (progress, cancel requested, moved).

// timelineObserver records what a state change says in j's timeline.
func (e *Engine) timelineObserver(tx *replica.Tx, _ string, j *job.Job, from job.State) {
	now := tx.Now.UnixNano()
	if from == job.New {
		detail := ""
		if j.State == job.Scheduled {
			detail = "scheduled for " + fmtTime(j.ScheduledAt)
		}
		j.Record(now, job.EvEnqueued, detail)
		return
	}
	if from == job.Active {
		attemptEnded(j, now)
	}
	switch j.State {
	case job.Active:
		detail := "attempt " + strconv.Itoa(j.Attempt)
		if j.WorkerID != "" {
			detail = "worker " + j.WorkerID + " " + detail
		}
		j.Record(now, job.EvStarted, detail)
	case job.Retrying:
		j.Record(now, job.EvRetryScheduled, fmtTime(j.NextAttempt))
	case job.Pending:
		switch from {
		case job.Completed, job.Dead, job.Cancelled:
			j.Record(now, job.EvRetried, "")
		case job.Active:
			if !lastErrorIsLeaseExpiry(j, now) && !j.LastEventIs(job.EvLeaseReleased, now) {
				j.Record(now, job.EvRetryScheduled, fmtTime(now))
			}
		}
	case job.Completed:
		j.Record(now, job.EvCompleted, "")
	case job.Cancelled:
		j.Record(now, job.EvCancelled, j.CancelReason)
	case job.Dead:
		if j.DeadReason == job.ReasonExpired {
			j.Record(now, job.EvExpired, "")
		} else {
			j.Record(now, job.EvDead, j.DeadReason)
		}
	}
}

// attemptEnded records how an attempt that just left active failed: a
// failure or a lost lease records its error at the entry's time.
func attemptEnded(j *job.Job, now int64) {
	n := len(j.Errors)
	if n == 0 || j.Errors[n-1].At != now || j.Errors[n-1].Attempt != j.Attempt {
		return
	}
	if lastErrorIsLeaseExpiry(j, now) {
		j.Record(now, job.EvLeaseExpired, fmt.Sprintf("attempt %d", j.Attempt))
		return
	}
	j.Record(now, job.EvFailed, j.Errors[n-1].Error)
}

func lastErrorIsLeaseExpiry(j *job.Job, now int64) bool {
	n := len(j.Errors)
	return n > 0 && j.Errors[n-1].At == now && (j.Errors[n-1].Error == job.ReasonLeaseExpired || j.Errors[n-1].Error == leaseExpiredError)
}

func fmtTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
