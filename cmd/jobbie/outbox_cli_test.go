package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/jobbie/jobbie/outbox"
)

// jobbie outbox relay sends an application's committed rows (and not its
// rolled-back one) to a jobbie dev, and jobbie outbox reconcile reports
// them sent and known to Jobbie; bad flags are refused, naming the flag,
// before the database is touched.
func TestOutboxRelayAndReconcile(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	require.NoError(t, outbox.Migrate(ctx, db, outbox.SQLite))
	for i, commit := range []bool{true, false, true} {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = outbox.Enqueue(ctx, tx, outbox.Job{Queue: "outbox.cli", Payload: map[string]int{"n": i}})
		require.NoError(t, err)
		if commit {
			require.NoError(t, tx.Commit())
		} else {
			require.NoError(t, tx.Rollback())
		}
	}

	_, err = d.as(t, d.ownerFile, "outbox", "relay", "--dsn", path, "--driver", "mysql")
	require.ErrorContains(t, err, `--driver must be sqlite or postgres, not "mysql"`)
	_, err = d.as(t, d.ownerFile, "outbox", "reconcile")
	require.ErrorContains(t, err, "--dsn is required")
	_, err = d.as(t, d.ownerFile, "outbox", "relay", "--dsn", path, "--stop-at", "halfway")
	require.ErrorContains(t, err, "--stop-at must be one of")
	_, err = d.as(t, d.ownerFile, "outbox", "relay", "--dsn", path, "--batch", "0")
	require.ErrorContains(t, err, "--batch must be 1 to 1000, not 0")
	_, err = d.as(t, d.ownerFile, "outbox", "relay", "--dsn", path, "--lease", "10ms")
	require.ErrorContains(t, err, "--lease must be at least 1s")
	_, err = d.as(t, d.ownerFile, "outbox", "relay", "--dsn", path, "--min-backoff", "2s", "--max-backoff", "1s")
	require.ErrorContains(t, err, "--max-backoff (1s) must be at least --min-backoff (2s)")
	_, err = d.as(t, d.ownerFile, "outbox", "reconcile", "--dsn", path, "--max-checks", "0")
	require.ErrorContains(t, err, "--max-checks")
	var rows int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox WHERE status = 'pending' AND locked_by IS NULL`).Scan(&rows))
	require.Equal(t, 2, rows, "a refused command changed nothing")

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"outbox", "relay", "--dsn", path, "--poll", "50ms", "--url", d.gateway, "--key-file", d.ownerFile})
		root.SetErr(&stderr)
		done <- root.ExecuteContext(rctx)
	}()
	require.Eventually(t, func() bool {
		var n int
		return db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox WHERE status = 'sent'`).Scan(&n) == nil && n == 2
	}, 60*time.Second, 20*time.Millisecond, "the relay sends both committed rows: %s", &stderr)
	cancel()
	require.NoError(t, <-done, "the relay ends when its context does")

	var rep outbox.Report
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "outbox", "reconcile", "--dsn", path, "-o", "json")), &rep))
	require.Equal(t, map[string]int{"pending": 0, "sent": 2, "refused": 0, "expired": 0}, rep.Counts)
	require.Equal(t, 2, rep.Checked)
	require.Empty(t, rep.Unknown)
	require.Empty(t, rep.Stuck)
	table := d.run(t, "outbox", "reconcile", "--dsn", path)
	require.Contains(t, table, "pending 0 (claimed 0)  sent 2  refused 0  expired 0  checked in Jobbie 2")
	require.Contains(t, table, "sent but unknown to Jobbie: 0")
}
