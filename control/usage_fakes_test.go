package control

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// fakeUsageShard serves GET /internal/v1/usage as the contract of
// wire.UsagePage says a shard node does: over mutual TLS with a shard
// node's certificate, to control certificates only; buckets of hours at
// or after since, ordered by hour then namespace, pageSize at a time.
type fakeUsageShard struct {
	addr string

	mu       sync.Mutex
	answerAs string // the shard_id it answers with
	buckets  []wire.UsageBucket
	applied  time.Time
	pageSize int
	sinces   []time.Time // the since of every first page asked for
	requests int
	callers  map[string]int // requests by the caller's node id
}

func newFakeUsageShard(t *testing.T, ca *pkitest.CA, id pki.Identity) *fakeUsageShard {
	t.Helper()
	fs := &fakeUsageShard{answerAs: id.Shard, pageSize: 2}
	fs.addr = serveFakeShard(t, ca, id, fs, nil)
	return fs
}

func (fs *fakeUsageShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if peer, ok := pki.PeerIdentity(r.TLS); !ok || peer.Role != pki.RoleControl || r.URL.Path != "/internal/v1/usage" {
		http.Error(w, "no", http.StatusForbidden)
		return
	}
	since, err := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
	if err != nil {
		http.Error(w, "since", http.StatusBadRequest)
		return
	}
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.requests++
	if fs.callers == nil {
		fs.callers = map[string]int{}
	}
	peer, _ := pki.PeerIdentity(r.TLS)
	fs.callers[peer.Node]++
	if start == 0 {
		fs.sinces = append(fs.sinces, since)
	}
	var match []wire.UsageBucket
	for _, b := range fs.buckets {
		if !b.Hour.Before(since.Truncate(time.Hour)) {
			match = append(match, b)
		}
	}
	page := wire.UsagePage{ShardID: fs.answerAs, Buckets: []wire.UsageBucket{}, AppliedAt: fs.applied}
	end := min(start+fs.pageSize, len(match))
	if start < end {
		page.Buckets = match[start:end]
	}
	if end < len(match) {
		next := strconv.Itoa(end)
		page.Cursor = &next
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// set replaces the shard's buckets (kept in the contract's order) and its
// applied_at.
func (fs *fakeUsageShard) set(applied time.Time, buckets ...wire.UsageBucket) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.buckets = slices.Clone(buckets)
	slices.SortFunc(fs.buckets, func(a, b wire.UsageBucket) int {
		if c := a.Hour.Compare(b.Hour); c != 0 {
			return c
		}
		return compareStrings(a.Namespace, b.Namespace)
	})
	fs.applied = applied
}

func (fs *fakeUsageShard) lastSince(t *testing.T) time.Time {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	require.NotEmpty(t, fs.sinces, "the shard was never read")
	return fs.sinces[len(fs.sinces)-1]
}

// callerIDs are the node ids of the control nodes that read the shard.
func (fs *fakeUsageShard) callerIDs() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []string
	for id := range fs.callers {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// forgetCallers starts callerIDs afresh.
func (fs *fakeUsageShard) forgetCallers() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.callers = nil
}

func (fs *fakeUsageShard) requestCount() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.requests
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bucket is namespace ns of tenant tid's meters in hour h.
func bucket(tid, ns string, h time.Time, m wire.ShardMeters) wire.UsageBucket {
	return wire.UsageBucket{Namespace: tenancy.ShardNamespace(tid, ns), Hour: h, Meters: m}
}

// hourOf is an hour of 5 November 2026, UTC.
func hourOf(h int) time.Time { return time.Date(2026, 11, 5, h, 0, 0, 0, time.UTC) }

// runs counts executions: m(n) is n enqueued, executed and completed.
func runs(n int64) wire.ShardMeters {
	return wire.ShardMeters{JobsEnqueued: n, Executions: n, JobsCompleted: n}
}

// pullOnce runs one round of the puller on srv, as the leader's loop
// does each interval.
func pullOnce(t *testing.T, srv *Server) {
	t.Helper()
	srv.leader.PullAll(context.Background())
}

// usageOf reads tenant tid's usage of 5 November 2026 by hour (or, with
// ns, of that namespace).
func usageOf(t *testing.T, srv *Server, tid, ns string) wire.Usage {
	t.Helper()
	q, err := service.ParseUsageQuery(time.Now(), "2026-11-05T00:00:00Z", "2026-11-06T00:00:00Z", "hour", ns)
	require.NoError(t, err)
	u, err := srv.Usage(context.Background(), tid, q)
	require.NoError(t, err)
	return u
}

// cursorOf is shard's pull cursor.
func cursorOf(t *testing.T, srv *Server, shard string) time.Time {
	t.Helper()
	cursors, err := viewValue(srv, state.LoadPullCursors)
	require.NoError(t, err)
	return cursors[shard]
}

// noPulls is a config option for tests that run the puller by hand.
func noPulls(c *Config) { c.PullInterval = -1 }
