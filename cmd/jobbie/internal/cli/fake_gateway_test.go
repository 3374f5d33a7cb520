package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/stretchr/testify/require"
)

// fakeGateway answers GET paths with canned bodies and records the
// requests, for what a single dev cannot show: an unhealthy cluster,
// dead jobs across pages.
type fakeGateway struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newFakeGateway(t *testing.T, answer func(r *http.Request) string) *fakeGateway {
	t.Helper()
	f := &fakeGateway{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.RequestURI())
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer(r))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGateway) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// A cluster without a leader is printed, then status exits 1.
func TestStatusOfAnUnhealthyCluster(t *testing.T) {
	t.Parallel()
	f := newFakeGateway(t, func(r *http.Request) string {
		switch r.URL.Path {
		case "/api/v1/queues":
			return `{"queues":[{"name":"a","counts":{"pending":2,"dead":1},"throughput":1.5,"paused":true},
				{"name":"b","counts":{"pending":3,"active":1},"throughput":2}]}`
		case "/api/v1/workers":
			return `{"workers":[{"id":"w1","status":"active"},{"id":"w2","status":"gone"}]}`
		}
		return `{"shard_id":"s7","leader_id":"","healthy":false,"nodes":[{"id":"n1","role":"follower","status":"healthy"},
			{"id":"n2","role":"follower","status":"unreachable"},{"id":"n3","role":"follower","status":"unreachable"}]}`
	})
	out, _, err := runJobbie(t, "", "status", "--url", f.srv.URL, "--key", "k")
	require.EqualError(t, err, "shard s7 is unhealthy")
	require.Equal(t, "2 queues (1 paused)", clitest.Field(out, "QUEUES"), out)
	require.Equal(t, "pending 5, scheduled 0, active 1, retrying 0, held 0, completed 0, dead 1, cancelled 0", clitest.Field(out, "JOBS"))
	require.Equal(t, "3.5 completed per minute (last 5 minutes)", clitest.Field(out, "THROUGHPUT"))
	require.Equal(t, "1 active, 1 gone", clitest.Field(out, "WORKERS"))
	require.Equal(t, "s7: UNHEALTHY, leader none known", clitest.Field(out, "SHARD"))
	require.Equal(t, []string{"n2", "follower", "unreachable"}, clitest.TableRows(out)["n2 follower"], out)
}

// dead follows cursors until --limit, asking each page for no more than
// is left.
func TestDeadFollowsPagesToTheLimit(t *testing.T) {
	t.Parallel()
	job := func(i int) string {
		return fmt.Sprintf(`{"id":"job_%d","queue":"q","state":"dead","attempt":3,"dead_reason":"retries_exhausted",
			"last_error":"boom %d","died_at":"2026-02-10T09:30:00Z"}`, i, i)
	}
	f := newFakeGateway(t, func(r *http.Request) string {
		if r.URL.Query().Get("cursor") == "" {
			return `{"jobs":[` + job(1) + `,` + job(2) + `],"cursor":"c2","has_more":true}`
		}
		return `{"jobs":[` + job(3) + `],"cursor":"c3","has_more":true}`
	})
	out, _, err := runJobbie(t, "", "dead", "--queue", "q", "--limit", "3", "--url", f.srv.URL, "--key", "k")
	require.NoError(t, err)
	require.Equal(t, []string{"GET /api/v1/dead?limit=3&queue=q", "GET /api/v1/dead?cursor=c2&limit=1&queue=q"}, f.requests())
	require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 4, out)
	require.Equal(t, []string{"job_3", "q", "3", "retries_exhausted", "2026-02-10T09:30:00Z", "boom", "3"}, clitest.TableRows(out)["job_3 q"])
}

// `jobbie schedules run` asks the gateway to run the schedule by hand and
// says which job it enqueued.
func TestScheduleRunByHand(t *testing.T) {
	t.Parallel()
	f := newFakeGateway(t, func(r *http.Request) string { return `{"job_id":"job_01hx","status":"pending"}` })
	out, _, err := runJobbie(t, "", "schedules", "run", "nightly-report", "--url", f.srv.URL, "--key", "k")
	require.NoError(t, err)
	require.Equal(t, "schedule nightly-report ran: job job_01hx (pending)\n", out)
	require.Equal(t, []string{"POST /api/v1/schedules/nightly-report/run"}, f.requests())
}
