package cli

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/spf13/cobra"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/jobbie/jobbie/outbox"
)

// `jobbie outbox relay` and `jobbie outbox reconcile`: the transactional
// outbox (package outbox, docs/outbox.md) of an application's SQLite or
// PostgreSQL database, relayed to the gateway with an API key.

func outboxCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "outbox", Short: "Relay an application database's outbox to Jobbie, and reconcile it"}
	cmd.AddCommand(outboxRelayCmd(), outboxReconcileCmd())
	return cmd
}

// dbFlags are the flags naming the application's database.
type dbFlags struct{ dsn, driver string }

func addDBFlags(cmd *cobra.Command) *dbFlags {
	f := &dbFlags{}
	cmd.Flags().StringVar(&f.dsn, "dsn", "", "the application database ($JOBBIE_OUTBOX_DSN): a SQLite file (app.db, file:app.db?...) or a PostgreSQL URL (postgres://...)")
	cmd.Flags().StringVar(&f.driver, "driver", "", "sqlite or postgres (default: postgres for a postgres:// or postgresql:// DSN, else sqlite)")
	return f
}

// open opens and pings the database; for SQLite with a busy timeout, so
// a relay waits for the application's writes rather than failing.
func (f *dbFlags) open(cmd *cobra.Command) (*sql.DB, outbox.Dialect, error) {
	dsn := f.dsn
	if dsn == "" {
		dsn = os.Getenv("JOBBIE_OUTBOX_DSN")
	}
	if dsn == "" {
		return nil, "", errors.New("--dsn is required (or $JOBBIE_OUTBOX_DSN)")
	}
	d := outbox.Dialect(f.driver)
	if d == "" {
		d = outbox.SQLite
		if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
			d = outbox.Postgres
		}
	}
	driver := map[outbox.Dialect]string{outbox.SQLite: "sqlite", outbox.Postgres: "pgx"}[d]
	if driver == "" {
		return nil, "", fmt.Errorf("--driver must be sqlite or postgres, not %q", f.driver)
	}
	if d == outbox.SQLite && !strings.Contains(dsn, "busy_timeout") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, "", fmt.Errorf("--dsn: %w", err)
	}
	if err := db.PingContext(cmd.Context()); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("--dsn: %w", err)
	}
	return db, d, nil
}

func outboxRelayCmd() *cobra.Command {
	var cfg outbox.Config
	var migrate bool
	var stopAt string
	var stopAfter int
	cmd := &cobra.Command{
		Use:   "relay",
		Short: "Send the outbox's committed rows to Jobbie until stopped",
		Long: `relay sends the rows an application wrote with outbox.Enqueue to the
gateway, each with its row id as the Idempotency-Key, and marks them
sent with their job's id. Several relays may run against one database.
It applies the outbox's migrations first unless --migrate=false.

  jobbie outbox relay --dsn app.db
  jobbie outbox relay --dsn postgres://app@db/app --namespace emails`,
		Args: cobra.NoArgs,
	}
	db := addDBFlags(cmd)
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if stopAt != "" && !validPoint(stopAt) {
			return fmt.Errorf("--stop-at must be one of %v, not %q", outbox.Points, stopAt)
		}
		if err := checkRelayFlags(cfg, stopAfter); err != nil {
			return err
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		sqlDB, d, err := db.open(cmd)
		if err != nil {
			return err
		}
		defer sqlDB.Close()
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if migrate {
			if err := outbox.Migrate(ctx, sqlDB, d); err != nil {
				return err
			}
		}
		cfg.Dialect = d
		cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
		if stopAt != "" {
			cfg.Hook = stopHook(cmd.ErrOrStderr(), outbox.Point(stopAt), stopAfter)
		}
		r, err := outbox.NewRelay(sqlDB, c, cfg)
		if err != nil {
			return err
		}
		cfg.Logger.Info("outbox relay running", "owner", r.Owner(), "driver", string(d))
		if err := r.Run(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		return nil
	}
	f := cmd.Flags()
	f.BoolVar(&migrate, "migrate", true, "apply the outbox's migrations first")
	f.StringVar(&cfg.Owner, "owner", "", "this relay's name in the rows it locks (default <hostname>-<pid>-<random>)")
	f.IntVar(&cfg.Batch, "batch", 100, "rows claimed at once")
	f.DurationVar(&cfg.Lease, "lease", time.Minute, "how long a claimed row is this relay's; a dead relay's rows are claimed again after it")
	f.DurationVar(&cfg.Poll, "poll", time.Second, "wait when no row is due")
	f.DurationVar(&cfg.MinBackoff, "min-backoff", time.Second, "first wait before a failed send is tried again (doubling per attempt)")
	f.DurationVar(&cfg.MaxBackoff, "max-backoff", 5*time.Minute, "longest wait before a failed send is tried again")
	// Fault injection for the outbox's end-to-end tests: stop for good at
	// a step of a row's relay, saying so, until the process is killed.
	f.StringVar(&stopAt, "stop-at", "", "stop at this step of a row's relay (after-claim, after-send, after-mark) until killed; for fault-injection tests")
	f.IntVar(&stopAfter, "stop-after", 1, "stop at the Nth row reaching --stop-at")
	_ = f.MarkHidden("stop-at")
	_ = f.MarkHidden("stop-after")
	return cmd
}

// checkRelayFlags refuses a setting the relay would not work with,
// naming its flag, before anything is opened.
func checkRelayFlags(cfg outbox.Config, stopAfter int) error {
	switch {
	case cfg.Batch < 1 || cfg.Batch > 1000:
		return fmt.Errorf("--batch must be 1 to 1000, not %d", cfg.Batch)
	case cfg.Lease < time.Second:
		return fmt.Errorf("--lease must be at least 1s, not %s", cfg.Lease)
	case cfg.Poll <= 0:
		return fmt.Errorf("--poll must be positive, not %s", cfg.Poll)
	case cfg.MinBackoff <= 0:
		return fmt.Errorf("--min-backoff must be positive, not %s", cfg.MinBackoff)
	case cfg.MaxBackoff < cfg.MinBackoff:
		return fmt.Errorf("--max-backoff (%s) must be at least --min-backoff (%s)", cfg.MaxBackoff, cfg.MinBackoff)
	case stopAfter < 1:
		return fmt.Errorf("--stop-after must be at least 1, not %d", stopAfter)
	}
	return nil
}

func validPoint(s string) bool {
	for _, p := range outbox.Points {
		if string(p) == s {
			return true
		}
	}
	return false
}

// stopHook says, at the nth row reaching point, that the relay stopped
// there, and blocks the relay for good: a test kills the process then.
func stopHook(w io.Writer, point outbox.Point, nth int) func(outbox.Point, string) {
	seen := 0
	return func(p outbox.Point, id string) {
		if p != point {
			return
		}
		if seen++; seen < nth {
			return
		}
		fmt.Fprintf(w, "outbox relay stopped at %s of row %s\n", p, id)
		select {}
	}
}

func outboxReconcileCmd() *cobra.Command {
	var o outbox.ReconcileOptions
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Report the outbox's rows: counts, rows sent but unknown to Jobbie, rows stuck or unsent",
		Long: `reconcile counts the outbox's rows by status, lists the rows stuck (a
relay's lease ran out, or sends failing again and again), the rows Jobbie
refused or that expired, and looks up each row sent within --sent-within
in Jobbie, listing those whose job it does not know. Use the relay's key
and namespace. It changes nothing.

  jobbie outbox reconcile --dsn app.db
  jobbie outbox reconcile --dsn postgres://app@db/app -o json`,
		Args: cobra.NoArgs,
	}
	db := addDBFlags(cmd)
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if o.SentWithin <= 0 || o.MaxChecks < 1 || o.FailingAttempts < 1 || o.MaxRows < 1 {
			return errors.New("--sent-within must be positive, and --max-checks, --failing-attempts and --max-rows at least 1")
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		sqlDB, _, err := db.open(cmd)
		if err != nil {
			return err
		}
		defer sqlDB.Close()
		rep, err := outbox.Reconcile(cmd.Context(), sqlDB, c, o)
		if err != nil {
			return apiError(err)
		}
		if api.json() {
			return writeJSON(cmd.OutOrStdout(), rep)
		}
		return printReport(cmd.OutOrStdout(), rep)
	}
	f := cmd.Flags()
	f.DurationVar(&o.SentWithin, "sent-within", 24*time.Hour, "check the rows sent within this long in Jobbie")
	f.IntVar(&o.MaxChecks, "max-checks", 1000, "check at most this many sent rows, newest first")
	f.IntVar(&o.FailingAttempts, "failing-attempts", 5, "a pending row sent this many times is stuck")
	f.IntVar(&o.MaxRows, "max-rows", 100, "list at most this many rows of each kind")
	return cmd
}

func printReport(w io.Writer, rep *outbox.Report) error {
	c := rep.Counts
	fmt.Fprintf(w, "pending %d (claimed %d)  sent %d  refused %d  expired %d  checked in Jobbie %d\n",
		c[outbox.StatusPending], rep.Claimed, c[outbox.StatusSent], c[outbox.StatusRefused], c[outbox.StatusExpired], rep.Checked)
	for _, part := range []struct {
		title string
		rows  []outbox.Row
	}{{"sent but unknown to Jobbie", rep.Unknown}, {"stuck", rep.Stuck}, {"refused or expired", rep.Unsent}} {
		fmt.Fprintf(w, "\n%s: %d\n", part.title, len(part.rows))
		if len(part.rows) == 0 {
			continue
		}
		tw := newTable(w)
		fmt.Fprintln(tw, "ROW\tQUEUE\tSTATUS\tATTEMPTS\tCREATED\tLOCKED BY\tLOCKED UNTIL\tJOB\tLAST ERROR")
		for _, r := range part.rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Queue, r.Status, r.Attempts, stamp(&r.CreatedAt),
				orDash(r.LockedBy), stamp(r.LockedUntil), orDash(r.JobID), orDash(r.LastError))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
