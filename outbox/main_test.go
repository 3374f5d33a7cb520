package outbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/internal/leakcheck"
	"github.com/jobbie/jobbie/outbox"
	"github.com/jobbie/jobbie/outbox/outboxtest"
)

// pg is the one PostgreSQL server of this test binary; each test has a
// database of its own on it.
var pg *outboxtest.Postgres

func TestMain(m *testing.M) {
	var err error
	if pg, err = outboxtest.StartPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, "outbox tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	pg.Stop()
	if err := leakcheck.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "outbox tests: goroutines outlived them:", err)
		code = 1
	}
	os.Exit(code)
}

// eachDB runs f against a fresh SQLite file and a fresh PostgreSQL
// database, both migrated.
func eachDB(t *testing.T, f func(t *testing.T, d outbox.Dialect, db *sql.DB)) {
	for _, d := range []outbox.Dialect{outbox.SQLite, outbox.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db := openDB(t, d)
			require.NoError(t, outbox.Migrate(context.Background(), db, d))
			f(t, d, db)
		})
	}
}

func openDB(t *testing.T, d outbox.Dialect) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+filepath.Join(t.TempDir(), "app.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	if d == outbox.Postgres {
		driver, dsn = "pgx", pg.NewDatabase(t)
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// fakeJobbie answers the two calls the outbox makes, as Jobbie does: an
// enqueue keeps its Idempotency-Key's answer and gives it back to a
// repeat of the same body (422 for another body); a job is found by id.
// refuse makes the next enqueues answer with that status.
type fakeJobbie struct {
	*httptest.Server
	mu     sync.Mutex
	byKey  map[string]sent
	jobs   map[string]bool
	sends  []sent // every enqueue received, repeats included
	status int    // answer every enqueue with this when not 0
}

type sent struct {
	key, job, body string
}

func newFake(t *testing.T) *fakeJobbie {
	f := &fakeJobbie{byKey: map[string]sent{}, jobs: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeJobbie) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if id, ok := strings.CutPrefix(r.URL.Path, "/api/v1/jobs/"); ok && r.Method == "GET" {
		if !f.jobs[id] {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":{"code":"not_found","message":"job not found"}}`)
			return
		}
		fmt.Fprintf(w, `{"id":%q,"queue":"q","state":"pending"}`, id)
		return
	}
	var body json.RawMessage
	_ = json.NewDecoder(r.Body).Decode(&body)
	s := sent{key: r.Header.Get("Idempotency-Key"), body: string(body)}
	if f.status != 0 {
		f.sends = append(f.sends, s)
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"error":{"code":"bad_request","message":"refused","field":"queue"}}`)
		return
	}
	if first, ok := f.byKey[s.key]; ok {
		s.job = first.job
		f.sends = append(f.sends, s)
		if first.body != s.body {
			w.WriteHeader(422)
			fmt.Fprint(w, `{"error":{"code":"idempotency_key_reused","message":"another request"}}`)
			return
		}
		w.Header().Set("Idempotency-Replayed", "true")
		fmt.Fprintf(w, `{"job_id":%q,"status":"pending"}`, s.job)
		return
	}
	s.job = fmt.Sprintf("job_%d", len(f.byKey)+1)
	f.byKey[s.key], f.jobs[s.job] = s, true
	f.sends = append(f.sends, s)
	w.WriteHeader(201)
	fmt.Fprintf(w, `{"job_id":%q,"status":"pending"}`, s.job)
}

func (f *fakeJobbie) received() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.sends...)
}

func (f *fakeJobbie) refuse(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = status
}

// clientOf is a client of f that sends each request once, so a test sees
// the relay's own retries.
func clientOf(f *fakeJobbie) *client.Client {
	return client.New(f.URL, "key", client.WithoutRetries())
}
