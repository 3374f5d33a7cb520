package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/client"
)

// A row's status. A pending row is claimed while locked_until is ahead;
// sent, refused and expired rows are never claimed again.
const (
	StatusPending = "pending" // committed, not yet sent (or sent, and not yet marked)
	StatusSent    = "sent"    // Jobbie answered with job_id
	StatusRefused = "refused" // Jobbie refused the request itself (last_error says why)
	StatusExpired = "expired" // not marked sent within the key's window: a person settles it
)

// claimed is a row a relay locked.
type claimed struct {
	id        string
	request   string
	payload   sql.NullString
	attempts  int
	claimedAt int64         // this claim's time (Unix ms)
	maybeSent sql.NullInt64 // maybe_sent_at: claimedAt when no earlier send can have reached Jobbie
}

// claimSQL locks up to $4 due rows for owner $1 until $2 (now is $3) and
// counts the attempt. PostgreSQL skips rows another relay's claim is
// locking at that moment, and the outer condition is checked again on the
// row as it is once locked; SQLite has one writer, so claims never overlap.
// maybe_sent_at keeps the earliest claim whose send may have reached
// Jobbie: this one's time unless an earlier one's is kept.
func claimSQL(d Dialect) string {
	lock := ""
	if d == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	return `UPDATE jobbie_outbox SET locked_by = $1, locked_until = $2, attempts = attempts + 1,
		maybe_sent_at = COALESCE(maybe_sent_at, $3)
	WHERE id IN (SELECT id FROM jobbie_outbox
		WHERE status = 'pending' AND next_attempt_at <= $3 AND (locked_until IS NULL OR locked_until <= $3)
		ORDER BY next_attempt_at, created_at, id LIMIT $4` + lock + `)
		AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $3)
	RETURNING id, request, payload, attempts, maybe_sent_at`
}

func (r *Relay) claim(ctx context.Context) ([]claimed, error) {
	now := time.Now()
	rows, err := r.db.QueryContext(ctx, claimSQL(r.cfg.Dialect), r.cfg.Owner, now.Add(r.cfg.Lease).UnixMilli(), now.UnixMilli(), r.cfg.Batch)
	if err != nil {
		return nil, fmt.Errorf("outbox: claim: %w", err)
	}
	defer rows.Close()
	var out []claimed
	for rows.Next() {
		c := claimed{claimedAt: now.UnixMilli()}
		if err := rows.Scan(&c.id, &c.request, &c.payload, &c.attempts, &c.maybeSent); err != nil {
			return nil, fmt.Errorf("outbox: claim: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: claim: %w", err)
	}
	return out, nil
}

// markSent records the job a row became. It matches on the row's owner:
// if the lease ran out and another relay claimed the row, that relay's
// send gets the same job (the key) and marks it; this one changes nothing.
func (r *Relay) markSent(ctx context.Context, row claimed, jobID string) error {
	_, err := r.db.ExecContext(ctx, `UPDATE jobbie_outbox SET status = 'sent', sent_at = $1, job_id = $2,
		locked_by = NULL, locked_until = NULL, last_error = NULL WHERE id = $3 AND locked_by = $4 AND status = 'pending'`,
		time.Now().UnixMilli(), jobID, row.id, r.cfg.Owner)
	if err != nil {
		return fmt.Errorf("outbox: mark %s sent: %w", row.id, err)
	}
	return nil
}

// finish ends a row that will not be sent (again): refused or expired.
func (r *Relay) finish(ctx context.Context, row claimed, status, why string) error {
	_, err := r.db.ExecContext(ctx, `UPDATE jobbie_outbox SET status = $1, last_error = $2,
		locked_by = NULL, locked_until = NULL WHERE id = $3 AND locked_by = $4 AND status = 'pending'`,
		status, why, row.id, r.cfg.Owner)
	if err != nil {
		return fmt.Errorf("outbox: mark %s %s: %w", row.id, status, err)
	}
	return nil
}

// retryLater unlocks a row whose send failed, due again after a backoff
// that grows with its attempts. When Jobbie refused the send (a 4xx keeps
// no record, docs/api/README.md "Idempotency") and no earlier send of the
// row can have reached it, the row is again one no send of which reached
// Jobbie: its key's window has not started.
func (r *Relay) retryLater(ctx context.Context, row claimed, sendErr error) error {
	wait := backoffDelay(r.cfg.MinBackoff, r.cfg.MaxBackoff, row.attempts)
	r.cfg.Logger.Warn("outbox: send failed", "row", row.id, "attempt", row.attempts, "retry_in", wait, "err", sendErr)
	maybeSent := row.maybeSent
	if e, ok := client.AsError(sendErr); ok && e.Status >= 400 && e.Status < 500 && row.maybeSent.Int64 == row.claimedAt {
		maybeSent = sql.NullInt64{}
	}
	_, err := r.db.ExecContext(ctx, `UPDATE jobbie_outbox SET next_attempt_at = $1, last_error = $2, maybe_sent_at = $3,
		locked_by = NULL, locked_until = NULL WHERE id = $4 AND locked_by = $5 AND status = 'pending'`,
		time.Now().Add(wait).UnixMilli(), sendErr.Error(), maybeSent, row.id, r.cfg.Owner)
	if err != nil {
		return fmt.Errorf("outbox: retry %s later: %w", row.id, err)
	}
	return nil
}

// release unlocks rows this relay claimed and will not send now, so
// another relay (or this one, started again) takes them at once. It has
// a few seconds of its own: the relay's context is already done.
func (r *Relay) release(rows []claimed) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, row := range rows {
		if _, err := r.db.ExecContext(ctx, `UPDATE jobbie_outbox SET locked_by = NULL, locked_until = NULL
			WHERE id = $1 AND locked_by = $2 AND status = 'pending'`, row.id, r.cfg.Owner); err != nil {
			r.cfg.Logger.Warn("outbox: release", "row", row.id, "err", err)
			return // the lease gives the rest back
		}
	}
}
