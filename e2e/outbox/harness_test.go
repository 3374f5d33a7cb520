package outbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/outbox"
)

// cluster is a running `jobbie dev --shards 1 --replicas 3`.
type cluster struct {
	*devproc.Dev
	t *testing.T
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	ports, err := freeport.Loopback(2)
	require.NoError(t, err)
	d, err := devproc.StartDev(binary, devproc.Config{Dir: dir, Log: filepath.Join(dir, "dev.log"), Addr: ports[0],
		ControlAddr: ports[1], Flags: []string{"--shards", "1", "--replicas", "3"},
		ReadyWithin: 120 * time.Second, StopGrace: 30 * time.Second})
	require.NoError(t, err)
	c := &cluster{Dev: d, t: t}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				lines := strings.Split(string(b), "\n")
				t.Logf("--- %s (tail)\n%s", l, strings.Join(lines[max(0, len(lines)-30):], "\n"))
			}
		}
		d.Stop()
	})
	return c
}

type proc struct {
	Role, ShardID, NodeID string
	PID                   int
	HTTP                  string
}

// leaderPID waits until a node of the shard other than notPID leads and
// is ready, and returns its process id.
func (c *cluster) leaderPID(notPID int) int {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		raw, err := os.ReadFile(filepath.Join(c.Dir, "cluster.json"))
		require.NoError(c.t, err)
		var cf struct {
			Processes []struct {
				Role    string `json:"role"`
				PID     int    `json:"pid"`
				HTTP    string `json:"http"`
				ShardID string `json:"shard_id"`
			} `json:"processes"`
		}
		require.NoError(c.t, json.Unmarshal(raw, &cf))
		for _, p := range cf.Processes {
			if p.Role != "shard" || p.PID == 0 || p.PID == notPID {
				continue
			}
			if c.leads(p.HTTP) {
				return p.PID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatal("no shard leader within 60 s")
	return 0
}

func (c *cluster) leads(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/internal/v1/status", nil)
	res, err := c.Ops.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var s struct {
		State string `json:"state"`
		Ready bool   `json:"ready"`
	}
	return res.StatusCode == 200 && json.NewDecoder(res.Body).Decode(&s) == nil && s.State == "leader" && s.Ready
}

// app is the application: it writes its own row and an outbox row in
// one transaction, committed or rolled back, and remembers which.
type app struct {
	t          *testing.T
	db         *sql.DB
	queue      string
	mu         sync.Mutex
	next       int
	committed  map[int]string // n → outbox row id
	rolledBack map[int]bool
}

func newApp(t *testing.T, db *sql.DB, queue string) *app {
	_, err := db.Exec(`CREATE TABLE IF NOT EXISTS orders (n INTEGER PRIMARY KEY)`)
	require.NoError(t, err)
	return &app{t: t, db: db, queue: queue, committed: map[int]string{}, rolledBack: map[int]bool{}}
}

// write makes commits committed orders and rollbacks rolled-back ones.
func (a *app) write(commits, rollbacks int) {
	a.t.Helper()
	for i := range commits + rollbacks {
		a.order(i < commits)
	}
}

func (a *app) order(commit bool) {
	a.t.Helper()
	require.NoError(a.t, a.tryOrder(commit))
}

// tryOrder writes one order. A failure before the commit (a connection
// the database cut when it restarted) is tried again on another
// connection, as an application would; the commit itself is not, as its
// outcome would be unknown.
func (a *app) tryOrder(commit bool) error {
	a.mu.Lock()
	a.next++
	n := a.next
	a.mu.Unlock()
	ctx := context.Background()
	var lastErr error
	for range 5 {
		tx, err := a.db.BeginTx(ctx, nil)
		if err != nil {
			lastErr = err
			continue
		}
		id, err := a.stage(ctx, tx, n)
		if err != nil {
			_ = tx.Rollback()
			lastErr = err
			continue
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if !commit {
			a.rolledBack[n] = true
			return tx.Rollback()
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit of order %d: %w", n, err)
		}
		a.committed[n] = id
		return nil
	}
	return lastErr
}

// stage writes the order and its outbox row in tx.
func (a *app) stage(ctx context.Context, tx *sql.Tx, n int) (string, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (n) VALUES ($1)`, n); err != nil {
		return "", err
	}
	return outbox.Enqueue(ctx, tx, outbox.Job{Queue: a.queue, Payload: map[string]int{"order": n}})
}

// status is a row's status.
func (a *app) status(id string) string {
	a.t.Helper()
	var s string
	require.NoError(a.t, a.db.QueryRow(`SELECT status FROM jobbie_outbox WHERE id = $1`, id).Scan(&s))
	return s
}

// sent counts the rows marked sent; -1 when the database does not answer.
func (a *app) sent() int {
	var n int
	if err := a.db.QueryRow(`SELECT COUNT(*) FROM jobbie_outbox WHERE status = 'sent'`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// relay is a `jobbie outbox relay` subprocess.
type relay struct {
	*devproc.Proc
	t *testing.T
}

var stoppedLine = regexp.MustCompile(`outbox relay stopped at (\S+) of row (\S+)`)

// startRelay starts a relay of dsn to c; with stopAt, it stops for good
// at the stopAfter-th row reaching that step, and startRelay returns once
// it has.
func startRelay(t *testing.T, c *cluster, dsn string, stopAt outbox.Point, stopAfter int) *relay {
	t.Helper()
	args := []string{"outbox", "relay", "--dsn", dsn, "--url", c.Gateway, "--key", c.OwnerKey,
		"--lease", "2s", "--poll", "50ms", "--min-backoff", "100ms", "--max-backoff", "1s", "--batch", "2"}
	ready := "outbox relay running"
	if stopAt != "" {
		args = append(args, "--stop-at", string(stopAt), "--stop-after", fmt.Sprint(stopAfter))
		ready = "outbox relay stopped at"
	}
	log := filepath.Join(t.TempDir(), "relay.log")
	p, err := devproc.Start(exec.Command(binary, args...), log, ready)
	require.NoError(t, err)
	r := &relay{Proc: p, t: t}
	t.Cleanup(r.Kill)
	require.NoError(t, p.WaitReady(90*time.Second))
	return r
}

// stoppedRow is the row the relay stopped at.
func (r *relay) stoppedRow() string {
	b, _ := os.ReadFile(r.LogPath)
	m := stoppedLine.FindStringSubmatch(string(b))
	require.NotNil(r.t, m, "the relay says where it stopped")
	return m[2]
}

// jobsOf searches the queue's jobs and returns each order's job ids.
func jobsOf(t *testing.T, c *cluster, queue string) map[int][]string {
	t.Helper()
	cl := client.New(c.Gateway, c.OwnerKey)
	out := map[int][]string{}
	for j, err := range cl.SearchAll(context.Background(), client.SearchRequest{
		SearchFilter: client.SearchFilter{Queue: queue}, Limit: client.MaxSearchLimit}) {
		require.NoError(t, err)
		var p struct {
			Order int `json:"order"`
		}
		require.NoError(t, json.Unmarshal(j.Payload, &p))
		out[p.Order] = append(out[p.Order], j.ID)
	}
	return out
}

func jobbieClient(c *cluster) *client.Client { return client.New(c.Gateway, c.OwnerKey) }
