package outbox_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/outbox"
)

// PostgreSQL stopped while a running relay is held at each step of a
// row's relay: its connections are cut, its next statement fails, it
// says so and waits, and it goes on once the server is back; every row
// is enqueued once. Not parallel: the restart
// cuts every connection to the test binary's one server, and Go runs no
// parallel test beside a sequential one.
func TestTheRelayGoesOnWhenPostgresStopsAtEachStep(t *testing.T) {
	for _, p := range outbox.Points {
		t.Run(string(p), func(t *testing.T) {
			db := openDB(t, outbox.Postgres)
			require.NoError(t, outbox.Migrate(context.Background(), db, outbox.Postgres))
			f := newFake(t)
			const rows = 6
			for i := range rows {
				enqueueIn(t, db, outbox.Job{Queue: "q", Payload: i}, true)
			}
			var logs syncBuf
			held, release := make(chan string), make(chan struct{})
			var once sync.Once
			r := newRelay(t, outbox.Postgres, db, clientOf(f), outbox.Config{Batch: 2, Poll: 20 * time.Millisecond,
				Lease: time.Second, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Hook: func(at outbox.Point, id string) {
					if at == p {
						once.Do(func() { held <- id; <-release })
					}
				}})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			id := <-held
			pg.Down()
			close(release)
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), `msg="outbox: database"`) },
				60*time.Second, 10*time.Millisecond, "the relay meets the stopped database")
			require.NoError(t, pg.Start())
			require.Eventually(t, func() bool {
				var n int
				return db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox WHERE status = 'sent'`).Scan(&n) == nil && n == rows
			}, 60*time.Second, 20*time.Millisecond, "every row is sent after the restart")
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)

			jobs := map[string]string{}
			for _, s := range f.received() {
				if prev, ok := jobs[s.key]; ok {
					require.Equal(t, prev, s.job, "a resend of row %s is its first job", s.key)
				}
				jobs[s.key] = s.job
			}
			require.Len(t, jobs, rows, "one job per row")
			status, job, _, _ := row(t, db, id)
			require.Equal(t, outbox.StatusSent, status)
			require.Equal(t, jobs[id], job)
		})
	}
}

// syncBuf is a buffer the relay's log and the test share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
