package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/client"
)

// ReconcileOptions bound a reconciliation. Zero fields take the defaults
// their comments give.
type ReconcileOptions struct {
	// SentWithin is how far back sent rows are checked against Jobbie;
	// default 24 hours. Keep it within the namespace's retention: a job
	// pruned after it finished is unknown to Jobbie too.
	SentWithin time.Duration
	// MaxChecks bounds the sent rows checked (one GET each), newest
	// first; default 1,000.
	MaxChecks int
	// FailingAttempts is how many sends of a pending row make it stuck;
	// default 5.
	FailingAttempts int
	// MaxRows bounds each list of the report; default 100.
	MaxRows int
}

func (o ReconcileOptions) withDefaults() ReconcileOptions {
	if o.SentWithin <= 0 {
		o.SentWithin = 24 * time.Hour
	}
	if o.MaxChecks <= 0 {
		o.MaxChecks = 1000
	}
	if o.FailingAttempts <= 0 {
		o.FailingAttempts = 5
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 100
	}
	return o
}

// Report is what Reconcile found.
type Report struct {
	// Counts of rows by status ("pending", "sent", "refused", "expired").
	Counts map[string]int `json:"counts"`
	// Claimed is how many pending rows a relay holds now (lease ahead).
	Claimed int `json:"claimed"`
	// Checked is how many sent rows were looked up in Jobbie.
	Checked int `json:"checked"`
	// Unknown: rows marked sent whose job Jobbie does not know (deleted,
	// pruned, or sent with another key or namespace than this client's).
	Unknown []Row `json:"unknown"`
	// Stuck: pending rows claimed by a relay whose lease ran out (it
	// died; the next claim takes them again), or sent FailingAttempts
	// times or more without success.
	Stuck []Row `json:"stuck"`
	// Unsent: rows Jobbie refused, and rows expired (docs/outbox.md).
	Unsent []Row `json:"unsent"`
}

// Row is one outbox row as a report lists it.
type Row struct {
	ID          string     `json:"id"`
	Queue       string     `json:"queue"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	CreatedAt   time.Time  `json:"created_at"`
	LockedBy    string     `json:"locked_by,omitempty"`
	LockedUntil *time.Time `json:"locked_until,omitempty"`
	SentAt      *time.Time `json:"sent_at,omitempty"`
	JobID       string     `json:"job_id,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
}

const rowColumns = `id, queue, status, attempts, created_at, locked_by, locked_until, sent_at, job_id, last_error`

// Reconcile reports on db's outbox: counts by status, rows stuck, rows
// Jobbie refused or that expired, and rows marked sent whose job Jobbie
// (through c, with the relay's key and namespace) does not know. It
// changes nothing.
func Reconcile(ctx context.Context, db *sql.DB, c *client.Client, opts ReconcileOptions) (*Report, error) {
	o := opts.withDefaults()
	now := time.Now().UnixMilli()
	rep := &Report{Counts: map[string]int{StatusPending: 0, StatusSent: 0, StatusRefused: 0, StatusExpired: 0}}
	if err := counts(ctx, db, now, rep); err != nil {
		return nil, err
	}
	var err error
	if rep.Stuck, err = queryRows(ctx, db, `SELECT `+rowColumns+` FROM jobbie_outbox WHERE status = 'pending'
		AND ((locked_until IS NOT NULL AND locked_until <= $1) OR attempts >= $2) ORDER BY created_at, id LIMIT $3`,
		now, o.FailingAttempts, o.MaxRows); err != nil {
		return nil, err
	}
	if rep.Unsent, err = queryRows(ctx, db, `SELECT `+rowColumns+` FROM jobbie_outbox WHERE status IN ('refused', 'expired')
		ORDER BY created_at, id LIMIT $1`, o.MaxRows); err != nil {
		return nil, err
	}
	sent, err := queryRows(ctx, db, `SELECT `+rowColumns+` FROM jobbie_outbox WHERE status = 'sent' AND sent_at >= $1
		ORDER BY sent_at DESC LIMIT $2`, now-o.SentWithin.Milliseconds(), o.MaxChecks)
	if err != nil {
		return nil, err
	}
	for _, row := range sent {
		_, err := c.GetJob(ctx, row.JobID)
		switch {
		case client.IsNotFound(err):
			if len(rep.Unknown) < o.MaxRows {
				rep.Unknown = append(rep.Unknown, row)
			}
		case err != nil:
			return nil, fmt.Errorf("outbox: reconcile: job %s of row %s: %w", row.JobID, row.ID, err)
		}
		rep.Checked++
	}
	return rep, nil
}

func counts(ctx context.Context, db *sql.DB, now int64, rep *Report) error {
	rows, err := db.QueryContext(ctx, `SELECT status, COUNT(*),
		SUM(CASE WHEN locked_until IS NOT NULL AND locked_until > $1 THEN 1 ELSE 0 END) FROM jobbie_outbox GROUP BY status`, now)
	if err != nil {
		return fmt.Errorf("outbox: reconcile: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n, claimed int
		if err := rows.Scan(&status, &n, &claimed); err != nil {
			return fmt.Errorf("outbox: reconcile: %w", err)
		}
		rep.Counts[status] = n
		rep.Claimed += claimed
	}
	return rows.Err()
}

func queryRows(ctx context.Context, db *sql.DB, q string, args ...any) ([]Row, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("outbox: reconcile: %w", err)
	}
	defer rows.Close()
	out := []Row{}
	for rows.Next() {
		var (
			r                      Row
			created                int64
			lockedUntil, sentAt    sql.NullInt64
			lockedBy, job, lastErr sql.NullString
		)
		if err := rows.Scan(&r.ID, &r.Queue, &r.Status, &r.Attempts, &created, &lockedBy, &lockedUntil, &sentAt, &job, &lastErr); err != nil {
			return nil, fmt.Errorf("outbox: reconcile: %w", err)
		}
		r.CreatedAt = time.UnixMilli(created).UTC()
		r.LockedBy, r.JobID, r.LastError = lockedBy.String, job.String, lastErr.String
		r.LockedUntil, r.SentAt = msTime(lockedUntil), msTime(sentAt)
		out = append(out, r)
	}
	return out, rows.Err()
}

func msTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64).UTC()
	return &t
}
