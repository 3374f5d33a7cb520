package outbox_test

import (
	"database/sql"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/outbox"
)

// Relays killed at each step of a row's relay, the database stopped and
// started again (PostgreSQL), and the shard's leader killed under a
// running relay: in the end every committed order is enqueued exactly
// once, as the job its row was marked with, and no rolled-back order is
// enqueued at all.
func TestOutboxSurvivesRelayDatabaseAndLeaderFaults(t *testing.T) {
	c := startCluster(t)
	for _, d := range []outbox.Dialect{outbox.SQLite, outbox.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			driver, dsn := "sqlite", filepath.Join(t.TempDir(), "app.db")
			if d == outbox.Postgres {
				driver, dsn = "pgx", pg.NewDatabase(t)
			}
			db, err := sql.Open(driver, dsn+map[outbox.Dialect]string{outbox.SQLite: "?_pragma=busy_timeout(10000)"}[d])
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			require.NoError(t, outbox.Migrate(t.Context(), db, d))
			a := newApp(t, db, "outbox-e2e-"+string(d))

			// A relay killed at each step, at its second row there.
			for _, p := range outbox.Points {
				a.write(3, 1)
				r := startRelay(t, c, dsn, p, 2)
				row := r.stoppedRow()
				switch p {
				case outbox.AfterClaim, outbox.AfterSend:
					// After the send, Jobbie holds the job; the row is not yet marked.
					require.Equal(t, outbox.StatusPending, a.status(row), "at %s", p)
				case outbox.AfterMark:
					require.Equal(t, outbox.StatusSent, a.status(row), "at %s", p)
				}
				r.Kill()
				t.Logf("%s: relay killed %s row %s", d, p, row)
			}

			if d == outbox.Postgres {
				// The database stopped under a running relay: its
				// connections are cut, its statements fail, it waits and
				// goes on once the database is back.
				r := startRelay(t, c, dsn, "", 0)
				a.write(3, 1)
				sentBefore := a.sent()
				require.Eventually(t, func() bool { return a.sent() > sentBefore }, 60*time.Second, 20*time.Millisecond)
				pg.Down()
				require.Eventually(t, func() bool { return r.Count(`msg="outbox: database"`) > 0 }, 60*time.Second, 20*time.Millisecond,
					"the relay meets the stopped database")
				require.NoError(t, pg.Start())
				t.Logf("%s: database stopped and started again under a running relay", d)
				a.write(3, 1)
				require.Eventually(t, func() bool { return a.sent() == len(a.committed) }, 120*time.Second, 50*time.Millisecond,
					"the relay sends every committed row after the restart")
				r.Kill()
			}

			// The shard's leader killed while a relay sends a stream of
			// orders.
			r := startRelay(t, c, dsn, "", 0)
			done := make(chan struct{})
			wrote := make(chan error, 1)
			go func() {
				for i := 0; i < 300; i++ { // at most 300 orders, half of them committed
					select {
					case <-done:
						wrote <- nil
						return
					default:
					}
					if err := a.tryOrder(i%2 == 0); err != nil {
						wrote <- err
						return
					}
				}
				<-done
				wrote <- nil
			}()
			base := a.sent()
			require.Eventually(t, func() bool { return a.sent() >= base+10 }, 60*time.Second, 20*time.Millisecond)
			leader := c.leaderPID(0)
			require.NoError(t, syscall.Kill(leader, syscall.SIGKILL))
			t.Logf("%s: killed shard leader pid %d", d, leader)
			c.leaderPID(leader)
			after := a.sent()
			require.Eventually(t, func() bool { return a.sent() >= after+10 }, 120*time.Second, 20*time.Millisecond,
				"rows are sent again once another node leads")
			close(done)
			require.NoError(t, <-wrote)
			require.Eventually(t, func() bool { return a.sent() == len(a.committed) }, 180*time.Second, 50*time.Millisecond,
				"every committed row is sent")
			r.Stop()

			// Jobbie holds each committed order once, as its row's job,
			// and no rolled-back order.
			var jobs map[int][]string
			require.Eventually(t, func() bool {
				jobs = jobsOf(t, c, a.queue)
				return len(jobs) >= len(a.committed)
			}, 60*time.Second, 100*time.Millisecond, "search shows every job")
			for n, rowID := range a.committed {
				require.Len(t, jobs[n], 1, "order %d is enqueued exactly once", n)
				var job string
				require.NoError(t, db.QueryRow(`SELECT job_id FROM jobbie_outbox WHERE id = $1`, rowID).Scan(&job))
				require.Equal(t, job, jobs[n][0], "order %d's row is marked with its job", n)
			}
			for n := range a.rolledBack {
				require.Empty(t, jobs[n], "order %d was rolled back", n)
			}
			require.Len(t, jobs, len(a.committed))
			t.Logf("%s: %d committed orders enqueued once each, %d rolled back and never enqueued",
				d, len(a.committed), len(a.rolledBack))

			rep, err := outbox.Reconcile(t.Context(), db, jobbieClient(c), outbox.ReconcileOptions{MaxChecks: 10000})
			require.NoError(t, err)
			require.Empty(t, rep.Unknown)
			require.Empty(t, rep.Stuck)
			require.Equal(t, len(a.committed), rep.Checked)
		})
	}
}
