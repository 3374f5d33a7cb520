package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Config is how a Relay works. Zero fields take the defaults their
// comments give.
type Config struct {
	// Dialect is the database's: SQLite or Postgres. Required.
	Dialect Dialect
	// Owner names this relay in the rows it locks; default
	// "<hostname>-<pid>-<random>". Two relays must not share one.
	Owner string
	// Batch is how many rows one claim takes; default 100.
	Batch int
	// Lease is how long a claimed row stays this relay's; a relay that
	// died has its rows claimed again by another once it passes. Default
	// 1 minute; it should exceed the client's retry policy's MaxElapsed,
	// so a send still being retried is rarely sent by a second relay too
	// (which would be safe: the key gives both the same job).
	Lease time.Duration
	// Poll is how long the relay waits when it found nothing to send;
	// default 1 s.
	Poll time.Duration
	// MinBackoff and MaxBackoff bound the wait before a row whose send
	// failed is tried again (doubling per attempt, jittered) and the wait
	// after a database error; defaults 1 s and 5 minutes.
	MinBackoff, MaxBackoff time.Duration
	// KeyWindow is how long after a send that may have reached Jobbie
	// (one whose answer was not a refusal) a resend is still safe: Jobbie
	// keeps an Idempotency-Key's answer 24 hours. A row not marked sent
	// by then is not sent again but set "expired" for a person to settle
	// (docs/outbox.md). Default 23 hours, an hour short of the key's life
	// for clocks that differ.
	KeyWindow time.Duration
	// Logger gets a line per row sent, refused or expired and per error;
	// default slog.Default().
	Logger *slog.Logger
	// Hook, when set, is called at each step of a row's relay (Point)
	// with the row's id, before the relay goes on: fault-injection tests
	// stop or kill the relay there.
	Hook func(p Point, rowID string)
}

// Point is a step of relaying a row, where Config.Hook is called.
type Point string

const (
	// AfterClaim: the row is locked by this relay; nothing sent yet.
	AfterClaim Point = "after-claim"
	// AfterSend: Jobbie answered the enqueue with the job; the row is
	// not yet marked sent.
	AfterSend Point = "after-send"
	// AfterMark: the row is marked sent with its job's id.
	AfterMark Point = "after-mark"
)

// Points are the steps in the order a row passes them.
var Points = []Point{AfterClaim, AfterSend, AfterMark}

func (c Config) withDefaults() Config {
	if c.Owner == "" {
		host, _ := os.Hostname()
		c.Owner = fmt.Sprintf("%s-%d-%08x", host, os.Getpid(), rand.Uint32())
	}
	if c.Batch <= 0 {
		c.Batch = 100
	}
	if c.Lease <= 0 {
		c.Lease = time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(5*time.Minute, c.MinBackoff)
	}
	if c.KeyWindow <= 0 {
		c.KeyWindow = 23 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Relay sends the outbox's committed rows to Jobbie. Several relays may
// run against one database; each row is sent by the one that claimed it.
type Relay struct {
	db  *sql.DB
	c   *client.Client
	cfg Config
}

// NewRelay is a relay of db's outbox to Jobbie through c (whose key and
// namespace the jobs are enqueued with).
func NewRelay(db *sql.DB, c *client.Client, cfg Config) (*Relay, error) {
	if err := cfg.Dialect.check(); err != nil {
		return nil, err
	}
	if db == nil || c == nil {
		return nil, errors.New("outbox: a relay needs a database and a client")
	}
	return &Relay{db: db, c: c, cfg: cfg.withDefaults()}, nil
}

// Owner is the name this relay locks rows with.
func (r *Relay) Owner() string { return r.cfg.Owner }

// Run relays until ctx is done, then returns ctx's error. A database
// error is logged and waited out with backoff; it never ends Run.
func (r *Relay) Run(ctx context.Context) error {
	var dbErrs int
	for {
		n, err := r.RelayOnce(ctx)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			dbErrs++
			wait = backoffDelay(r.cfg.MinBackoff, r.cfg.MaxBackoff, dbErrs)
			r.cfg.Logger.Warn("outbox: database", "err", err, "retry_in", wait)
		case n == 0:
			dbErrs, wait = 0, r.cfg.Poll
		default:
			dbErrs = 0
			continue // more may be due at once
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// RelayOnce claims one batch of due rows and relays each; it returns
// how many it claimed. An error is the database's, or ctx's once it is
// done: a row whose send failed is set to be tried again, not an error
// of RelayOnce.
func (r *Relay) RelayOnce(ctx context.Context) (int, error) {
	rows, err := r.claim(ctx)
	if err != nil {
		return 0, err
	}
	for i, row := range rows {
		if err := r.relayRow(ctx, row); err != nil {
			if ctx.Err() != nil {
				// Stopping: the rows not yet marked are given back at
				// once rather than at the end of their lease (the one in
				// flight may have reached Jobbie: its key makes the next
				// send of it the same job).
				r.release(rows[i:])
			}
			// Otherwise the database failed: the rows not yet marked
			// stay locked until their lease runs out, and are claimed
			// again then.
			return i, err
		}
	}
	return len(rows), nil
}

// relayRow sends one claimed row and records the outcome.
func (r *Relay) relayRow(ctx context.Context, row claimed) error {
	r.hook(AfterClaim, row.id)
	if row.maybeSent.Valid && row.maybeSent.Int64 < row.claimedAt &&
		time.Since(time.UnixMilli(row.maybeSent.Int64)) > r.cfg.KeyWindow {
		// An earlier send may have reached Jobbie, longer ago than it
		// keeps the key, and the row was never marked: a send now could
		// enqueue it twice. A person settles it.
		since := time.UnixMilli(row.maybeSent.Int64).UTC().Format(time.RFC3339)
		r.cfg.Logger.Warn("outbox: row expired: it may have reached Jobbie before the Idempotency-Key window", "row", row.id, "since", since)
		return r.finish(ctx, row, StatusExpired, "not sent again: a send of it may have reached Jobbie at "+since+
			", longer ago than the Idempotency-Key is kept")
	}
	job, err := decodeJob(row.request, row.payload)
	if err != nil {
		return r.finish(ctx, row, StatusRefused, err.Error())
	}
	// The row's id is the key; the relay's own trace context is not the
	// job's, so every send of the row is the same request.
	sendCtx := client.WithIdempotencyKey(client.WithTraceParent(ctx, "", ""), row.id)
	res, err := r.c.Enqueue(sendCtx, job)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if refused(err) {
			r.cfg.Logger.Warn("outbox: row refused by Jobbie", "row", row.id, "err", err)
			return r.finish(ctx, row, StatusRefused, err.Error())
		}
		return r.retryLater(ctx, row, err)
	}
	r.hook(AfterSend, row.id)
	if err := r.markSent(ctx, row, res.JobID); err != nil {
		return err
	}
	r.cfg.Logger.Debug("outbox: row sent", "row", row.id, "job", res.JobID)
	r.hook(AfterMark, row.id)
	return nil
}

// refused reports whether Jobbie refused the request itself, so that the
// same row sent again would be refused again: a bad job (400), too large
// (413), or its key used for another request (422). A key that is not
// allowed (401, 403) or a namespace not found (404) are the relay's
// settings, which may be mended: those rows are tried again.
func refused(err error) bool {
	e, ok := client.AsError(err)
	if !ok {
		return false
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

func (r *Relay) hook(p Point, id string) {
	if r.cfg.Hook != nil {
		r.cfg.Hook(p, id)
	}
}

// backoffDelay is the wait before the nth try (n from 1): min doubled per
// try up to max, with the second half jittered.
func backoffDelay(lo, hi time.Duration, n int) time.Duration {
	d := min(lo<<min(n-1, 20), hi)
	return d/2 + rand.N(d/2+1)
}
