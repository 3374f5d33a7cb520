package outbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/outbox"
)

// enqueueIn writes job in a transaction of its own and commits it, or
// rolls it back; it returns the row's id.
func enqueueIn(t *testing.T, db *sql.DB, job outbox.Job, commit bool) string {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	id, err := outbox.Enqueue(ctx, tx, job)
	require.NoError(t, err)
	if commit {
		require.NoError(t, tx.Commit())
	} else {
		require.NoError(t, tx.Rollback())
	}
	return id
}

func newRelay(t *testing.T, d outbox.Dialect, db *sql.DB, c *client.Client, cfg outbox.Config) *outbox.Relay {
	t.Helper()
	cfg.Dialect = d
	r, err := outbox.NewRelay(db, c, cfg)
	require.NoError(t, err)
	return r
}

// row reads a row's status, job id, attempts and last error.
func row(t *testing.T, db *sql.DB, id string) (status, job string, attempts int, lastErr string) {
	t.Helper()
	var j, e sql.NullString
	require.NoError(t, db.QueryRow(`SELECT status, job_id, attempts, last_error FROM jobbie_outbox WHERE id = $1`, id).
		Scan(&status, &j, &attempts, &e))
	return status, j.String, attempts, e.String
}

func TestARowIsSentOnceItsTransactionCommitsAndNeverIfItRollsBack(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		retries := 2
		job := outbox.Job{Queue: "emails", Payload: map[string]any{"to": "a@example.com", "n": 12345678901234567},
			MaxRetries: &retries, Tags: map[string]string{"k": "v"}, ExpireAfter: time.Hour,
			Chain: &client.Chain{Steps: []client.ChainStep{{}, {Queue: "next", Payload: map[string]any{"big": 9007199254740993}}}}}
		kept := enqueueIn(t, db, job, true)
		enqueueIn(t, db, outbox.Job{Queue: "emails", Payload: "rolled back"}, false)

		n, err := newRelay(t, d, db, clientOf(f), outbox.Config{}).RelayOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the committed row is there to send")
		got := f.received()
		require.Len(t, got, 1)
		require.Equal(t, kept, got[0].key, "the row's id is the Idempotency-Key")
		want, err := json.Marshal(job)
		require.NoError(t, err)
		require.JSONEq(t, string(want), got[0].body, "the row keeps every field of the request")
		require.Contains(t, got[0].body, "9007199254740993", "a chain step's large number is sent as written")
		status, jobID, attempts, _ := row(t, db, kept)
		require.Equal(t, outbox.StatusSent, status)
		require.Equal(t, got[0].job, jobID)
		require.Equal(t, 1, attempts)

		n, err = newRelay(t, d, db, clientOf(f), outbox.Config{}).RelayOnce(context.Background())
		require.NoError(t, err)
		require.Zero(t, n, "a sent row is not claimed again")
	})
}

// The trace context of the caller's ctx is the job's, not the relay's.
func TestARowKeepsTheTraceContextItWasWrittenIn(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		const app = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		ctx := client.WithTraceParent(context.Background(), app, "congo=t61rcWkgMzE")
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = outbox.Enqueue(ctx, tx, outbox.Job{Queue: "q", Payload: 1})
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		untraced := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 2}, true)
		relayCtx := client.WithTraceParent(context.Background(), "00-11111111111111111111111111111111-2222222222222222-01", "")
		_, err = newRelay(t, d, db, clientOf(f), outbox.Config{}).RelayOnce(relayCtx)
		require.NoError(t, err)
		got := f.received()
		require.Len(t, got, 2)
		for _, s := range got {
			var body struct{ Traceparent, Tracestate string }
			require.NoError(t, json.Unmarshal([]byte(s.body), &body))
			if s.key == untraced {
				require.Empty(t, body.Traceparent, "the relay's trace context is not the job's")
				continue
			}
			require.Equal(t, app, body.Traceparent)
			require.Equal(t, "congo=t61rcWkgMzE", body.Tracestate)
		}
	})
}

func TestEnqueueRefusesABadJobAndWritesNothing(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		ctx := context.Background()
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = outbox.Enqueue(ctx, tx, outbox.Job{Payload: 1})
		require.ErrorContains(t, err, "queue is required")
		_, err = outbox.Enqueue(ctx, tx, outbox.Job{Queue: "q", Payload: make(chan int)})
		require.ErrorContains(t, err, "payload")
		require.NoError(t, tx.Commit())
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox`).Scan(&n))
		require.Zero(t, n)
	})
}

// A relay that dies after Jobbie enqueued a row's job, before it marked
// the row, leaves the row locked; once the lease passes another relay
// sends it again with the same key and gets the same job.
func TestARowSentAgainAfterACrashBeforeItsMarkIsTheSameJob(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		id := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: map[string]int{"n": 1}}, true)
		first := newRelay(t, d, db, clientOf(f), outbox.Config{Owner: "first", Lease: 300 * time.Millisecond,
			Hook: func(p outbox.Point, _ string) {
				if p == outbox.AfterSend {
					panic(errCrash) // the relay dies here, leaving what it holds as it is
				}
			}})
		require.PanicsWithValue(t, errCrash, func() { _, _ = first.RelayOnce(context.Background()) })
		status, _, _, _ := row(t, db, id)
		require.Equal(t, outbox.StatusPending, status)

		second := newRelay(t, d, db, clientOf(f), outbox.Config{Owner: "second"})
		require.Eventually(t, func() bool {
			n, err := second.RelayOnce(context.Background())
			require.NoError(t, err)
			return n == 1
		}, 30*time.Second, 20*time.Millisecond, "the second relay claims the row once the first's lease passed")
		got := f.received()
		require.Len(t, got, 2)
		require.Equal(t, got[0].key, got[1].key)
		require.Equal(t, got[0].body, got[1].body, "the resend is the same request")
		status, job, attempts, _ := row(t, db, id)
		require.Equal(t, outbox.StatusSent, status)
		require.Equal(t, got[0].job, job, "the row is the job of its first send")
		require.Equal(t, 2, attempts)
	})
}

func TestARefusedRowIsNotSentAgainAndAFailedSendWaits(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		r := newRelay(t, d, db, clientOf(f), outbox.Config{MinBackoff: time.Hour})
		ctx := context.Background()

		f.refuse(503)
		waits := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 1}, true)
		_, err := r.RelayOnce(ctx)
		require.NoError(t, err)
		status, _, attempts, lastErr := row(t, db, waits)
		require.Equal(t, outbox.StatusPending, status)
		require.Equal(t, 1, attempts)
		require.Contains(t, lastErr, "503")
		n, err := r.RelayOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "the row waits out its backoff")

		f.refuse(400)
		_, err = db.Exec(`UPDATE jobbie_outbox SET next_attempt_at = 0`)
		require.NoError(t, err)
		_, err = r.RelayOnce(ctx)
		require.NoError(t, err)
		status, _, _, lastErr = row(t, db, waits)
		require.Equal(t, outbox.StatusRefused, status)
		require.Contains(t, lastErr, "field queue")
		n, err = r.RelayOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "a refused row is not sent again")
		require.Len(t, f.received(), 2)
	})
}

// A row whose send may have reached Jobbie more than the key's window
// ago, and never marked, may be a job Jobbie no longer knows the key of:
// it is not sent again.
func TestARowPastTheKeyWindowIsExpiredNotResent(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		old := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 1}, true)
		fresh := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 2}, true)
		_, err := db.Exec(`UPDATE jobbie_outbox SET attempts = 1, maybe_sent_at = $1 WHERE id = $2`,
			time.Now().Add(-25*time.Hour).UnixMilli(), old)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE jobbie_outbox SET created_at = $1, next_attempt_at = $1 WHERE id = $2`,
			time.Now().Add(-48*time.Hour).UnixMilli(), fresh)
		require.NoError(t, err)
		n, err := newRelay(t, d, db, clientOf(f), outbox.Config{}).RelayOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 2, n)
		status, _, _, lastErr := row(t, db, old)
		require.Equal(t, outbox.StatusExpired, status)
		require.Contains(t, lastErr, "may have reached Jobbie at")
		require.Contains(t, lastErr, "longer ago than the Idempotency-Key is kept")
		status, _, _, _ = row(t, db, fresh)
		require.Equal(t, outbox.StatusSent, status, "a row never sent is sent, however old")
		require.Len(t, f.received(), 1)
	})
}

func TestRelaysWorkingTogetherSendEachRowOnce(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		const rows = 150
		for i := range rows {
			enqueueIn(t, db, outbox.Job{Queue: "q", Payload: i}, true)
		}
		var wg sync.WaitGroup
		for i := range 3 {
			r := newRelay(t, d, db, clientOf(f), outbox.Config{Batch: 7, Owner: string(rune('a' + i))})
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n, err := r.RelayOnce(context.Background())
					if err != nil || n == 0 {
						return
					}
				}
			}()
		}
		wg.Wait()
		require.Len(t, f.received(), rows, "no row sent twice")
		var sentRows int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox WHERE status = 'sent'`).Scan(&sentRows))
		require.Equal(t, rows, sentRows)
	})
}

func TestReconcileReportsUnknownStuckAndUnsentRows(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		ctx := context.Background()
		known := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 1}, true)
		gone := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 2}, true)
		_, err := newRelay(t, d, db, clientOf(f), outbox.Config{}).RelayOnce(ctx)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE jobbie_outbox SET job_id = 'job_gone' WHERE id = $1`, gone)
		require.NoError(t, err)
		stuck := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 3}, true)
		_, err = db.Exec(`UPDATE jobbie_outbox SET locked_by = 'dead', locked_until = $1, attempts = 1 WHERE id = $2`,
			time.Now().Add(-time.Minute).UnixMilli(), stuck)
		require.NoError(t, err)
		failing := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 4}, true)
		_, err = db.Exec(`UPDATE jobbie_outbox SET attempts = 9, last_error = 'boom', next_attempt_at = $1 WHERE id = $2`,
			time.Now().Add(time.Hour).UnixMilli(), failing)
		require.NoError(t, err)
		refused := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 5}, true)
		_, err = db.Exec(`UPDATE jobbie_outbox SET status = 'refused', last_error = 'bad' WHERE id = $1`, refused)
		require.NoError(t, err)

		rep, err := outbox.Reconcile(ctx, db, clientOf(f), outbox.ReconcileOptions{})
		require.NoError(t, err)
		require.Equal(t, map[string]int{"pending": 2, "sent": 2, "refused": 1, "expired": 0}, rep.Counts)
		require.Equal(t, 2, rep.Checked)
		require.Equal(t, []string{gone}, ids(rep.Unknown))
		require.ElementsMatch(t, []string{stuck, failing}, ids(rep.Stuck))
		require.Equal(t, []string{refused}, ids(rep.Unsent))
		require.NotContains(t, ids(rep.Unknown), known)
	})
}

func ids(rows []outbox.Row) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

func TestMigrateIsSafeToRepeat(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		require.NoError(t, outbox.Migrate(context.Background(), db, d))
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox_migrations`).Scan(&n))
		ms, err := outbox.Migrations(d)
		require.NoError(t, err)
		require.Equal(t, len(ms), n)
		_, err = outbox.Migrations("mysql")
		require.ErrorContains(t, err, `dialect must be "sqlite" or "postgres"`)
	})
}

var errCrash = errors.New("crash")

// A relay stopped in the middle of a batch gives its unsent rows back at
// once: another relay claims them without waiting out the lease.
func TestAStoppedRelayGivesBackTheRowsItHolds(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		for i := range 3 {
			enqueueIn(t, db, outbox.Job{Queue: "q", Payload: i}, true)
		}
		ctx, stop := context.WithCancel(context.Background())
		first := newRelay(t, d, db, clientOf(f), outbox.Config{Owner: "first", Lease: time.Hour,
			Hook: func(p outbox.Point, _ string) {
				if p == outbox.AfterClaim {
					stop()
				}
			}})
		n, err := first.RelayOnce(ctx)
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, n)
		n, err = newRelay(t, d, db, clientOf(f), outbox.Config{Owner: "second"}).RelayOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 3, n, "the second relay has every row at once, not after the first's hour")
		require.Len(t, f.received(), 3)
	})
}

// A send Jobbie refused (a 4xx) left no record there, so it starts no key
// window: a row refused for longer than the window (a revoked key, say)
// is still sent once the refusals stop. A send whose outcome is unknown
// (a 503 here) starts it, and a refusal after it does not undo that.
func TestOnlyASendThatMayHaveLandedStartsTheKeyWindow(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d outbox.Dialect, db *sql.DB) {
		f := newFake(t)
		r := newRelay(t, d, db, clientOf(f), outbox.Config{})
		ctx := context.Background()
		maybeSent := func(id string) sql.NullInt64 {
			var v sql.NullInt64
			require.NoError(t, db.QueryRow(`SELECT maybe_sent_at FROM jobbie_outbox WHERE id = $1`, id).Scan(&v))
			return v
		}
		due := func(ids ...string) {
			for _, id := range ids {
				_, err := db.Exec(`UPDATE jobbie_outbox SET next_attempt_at = 0 WHERE id = $1`, id)
				require.NoError(t, err)
			}
		}

		refused := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 1}, true)
		f.refuse(401)
		_, err := r.RelayOnce(ctx)
		require.NoError(t, err)
		require.False(t, maybeSent(refused).Valid, "a 401 reached nothing")

		unsure := enqueueIn(t, db, outbox.Job{Queue: "q", Payload: 2}, true)
		f.refuse(503)
		_, err = r.RelayOnce(ctx)
		require.NoError(t, err)
		require.True(t, maybeSent(unsure).Valid, "a 503's request may have been applied")
		f.refuse(401)
		due(refused, unsure)
		_, err = r.RelayOnce(ctx)
		require.NoError(t, err)
		require.True(t, maybeSent(unsure).Valid, "a later refusal does not undo an earlier unknown")
		require.False(t, maybeSent(refused).Valid, "refused again")

		// A day of refusals later, the refused row is sent; the unsure one expires.
		dayAgo := time.Now().Add(-25 * time.Hour).UnixMilli()
		_, err = db.Exec(`UPDATE jobbie_outbox SET maybe_sent_at = $1 WHERE id = $2`, dayAgo, unsure)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE jobbie_outbox SET created_at = $1 WHERE id = $2`, dayAgo, refused)
		require.NoError(t, err)
		f.refuse(0)
		due(refused, unsure)
		_, err = r.RelayOnce(ctx)
		require.NoError(t, err)
		status, _, attempts, _ := row(t, db, refused)
		require.Equal(t, outbox.StatusSent, status)
		require.Equal(t, 3, attempts)
		status, _, _, _ = row(t, db, unsure)
		require.Equal(t, outbox.StatusExpired, status)
	})
}
