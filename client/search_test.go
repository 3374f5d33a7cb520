package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

const searchJobReply = `{"id":"job_1","queue":"emails.send","payload":{"to":"a@example.com"},"state":"dead",
	"priority":"high","attempt":5,"max_retries":4,"retry_backoff":"exponential","retry_base_delay":"1s",
	"retry_max_delay":"10m","created_at":"2026-11-01T12:00:00Z","scheduled_at":null,"started_at":"2026-11-01T12:00:00Z",
	"completed_at":null,"expire_after":null,"unique_key":null,"unique_period":null,"batch_id":"bat_1",
	"chain_id":null,"chain_step":null,"tags":{"tenant":"acme"},"progress":null,"checkpoint":null,"result":null,
	"errors":[{"attempt":5,"error":"SMTP timeout","at":"2026-11-01T12:00:00Z"}],"worker":{"id":"w1"},
	"dead_reason":"retries_exhausted","updated_at":"2026-11-01T12:00:00Z","timeline":null,"last_error":"SMTP timeout"}`

// pagedServer answers searches from a list of canned pages and keeps the
// request bodies.
type pagedServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	pages  []string // one reply per request, in order; the last one repeats
	bodies []map[string]any
	header http.Header
}

func newPagedServer(t *testing.T, pages ...string) *pagedServer {
	t.Helper()
	p := &pagedServer{pages: pages}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/api/v1/jobs/search" {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		p.mu.Lock()
		p.bodies = append(p.bodies, body)
		p.header = r.Header.Clone()
		reply := p.pages[min(len(p.bodies), len(p.pages))-1]
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if reply[0] == '!' { // "!400 {...}": an error status
			var status int
			_, _ = fmt.Sscanf(reply, "!%d", &status)
			w.WriteHeader(status)
			reply = reply[5:]
		}
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pagedServer) client(t *testing.T, opts ...client.Option) *client.Client {
	c := client.New(p.srv.URL, "k3y", opts...)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func (p *pagedServer) requests() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.bodies...)
}

func page(cursor string, hasMore bool, ids ...string) string {
	jobs := make([]string, len(ids))
	for i, id := range ids {
		jobs[i] = fmt.Sprintf(`{"id":%q,"queue":"q","state":"dead","created_at":"2026-11-01T12:00:00Z"}`, id)
	}
	c := "null"
	if cursor != "" {
		c = fmt.Sprintf("%q", cursor)
	}
	return fmt.Sprintf(`{"jobs":[%s],"total":5,"total_exact":true,"cursor":%s,"has_more":%t,"duration_ms":2}`,
		strings.Join(jobs, ","), c, hasMore)
}

func TestSearchSendsEveryFilterAndDecodesThePage(t *testing.T) {
	t.Parallel()
	srv := newPagedServer(t, `{"jobs":[`+searchJobReply+`],"total":142,"total_exact":false,"cursor":"c2",
		"has_more":true,"duration_ms":1.7,"partial":true}`)
	c := srv.client(t, client.WithNamespace("ops"))
	at := func(h int) *time.Time { t := created.Add(time.Duration(h) * time.Hour); return &t }
	no, one, nine := false, 1, 9
	p, err := c.Search(context.Background(), client.SearchRequest{
		SearchFilter: client.SearchFilter{
			Queue: "emails.send", State: []string{"dead", "pending"}, Priority: client.PriorityHigh,
			Tags: map[string]string{"tenant": "acme"}, PayloadContains: "a@example.com", PayloadJQ: ".n > 1",
			CreatedAfter: at(1), CreatedBefore: at(2), ScheduledAfter: at(3), ScheduledBefore: at(4),
			StartedAfter: at(5), StartedBefore: at(6), CompletedAfter: at(7), CompletedBefore: at(8),
			ExpireAfter: at(9), ExpireBefore: at(10), WorkerID: "w1", HasErrors: &no, ErrorContains: "SMTP",
			BatchID: "bat_1", UniqueKey: "u1", AttemptMin: &one, AttemptMax: &nine, JobIDPrefix: "job_01",
		},
		Sort: client.SortPriority, Order: client.OrderAsc, Cursor: "c1", Limit: 10,
	})
	require.NoError(t, err)
	want := `{"queue":"emails.send","state":["dead","pending"],"priority":"high","tags":{"tenant":"acme"},
		"payload_contains":"a@example.com","payload_jq":".n > 1",
		"created_after":"2026-11-01T13:00:00Z","created_before":"2026-11-01T14:00:00Z",
		"scheduled_after":"2026-11-01T15:00:00Z","scheduled_before":"2026-11-01T16:00:00Z",
		"started_after":"2026-11-01T17:00:00Z","started_before":"2026-11-01T18:00:00Z",
		"completed_after":"2026-11-01T19:00:00Z","completed_before":"2026-11-01T20:00:00Z",
		"expire_after":"2026-11-01T21:00:00Z","expire_before":"2026-11-01T22:00:00Z",
		"worker_id":"w1","has_errors":false,"error_contains":"SMTP","batch_id":"bat_1","unique_key":"u1",
		"attempt_min":1,"attempt_max":9,"job_id_prefix":"job_01",
		"sort":"priority","order":"asc","cursor":"c1","limit":10}`
	got, _ := json.Marshal(srv.requests()[0])
	require.JSONEq(t, want, string(got))
	require.Equal(t, "Bearer k3y", srv.header.Get("Authorization"))
	require.Equal(t, "ops", srv.header.Get(client.NamespaceHeader))
	require.Equal(t, "application/json", srv.header.Get("Content-Type"))

	require.Equal(t, int64(142), p.Total)
	require.False(t, p.TotalExact)
	require.Equal(t, "c2", p.Cursor)
	require.True(t, p.HasMore)
	require.True(t, p.Partial)
	require.Equal(t, 1700*time.Microsecond, p.Duration)
	require.Len(t, p.Jobs, 1)
	j := p.Jobs[0]
	require.Equal(t, "SMTP timeout", j.LastError)
	require.Equal(t, "job_1", j.ID)
	require.Equal(t, client.PriorityHigh, j.Priority)
	require.Equal(t, 10*time.Minute, j.RetryMaxDelay)
	require.Equal(t, "bat_1", j.BatchID)
	require.Equal(t, "retries_exhausted", j.DeadReason)
	require.Equal(t, map[string]string{"tenant": "acme"}, j.Tags)
	require.Nil(t, j.Timeline)
	require.JSONEq(t, searchJobReply, string(j.Raw), "Raw is the object as sent")
}

func TestSearchEmptyRequestSendsEmptyObject(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"jobs":[],"total":0,"total_exact":true,"cursor":null,"has_more":false,"duration_ms":0.1}`)
	p, err := rec.client(t).Search(context.Background(), client.SearchRequest{})
	require.NoError(t, err)
	require.Empty(t, p.Jobs)
	require.Empty(t, p.Cursor)
	rec.requireRequest(t, "POST", "/api/v1/jobs/search", `{}`)
}

func TestSearchAllFollowsCursors(t *testing.T) {
	t.Parallel()
	srv := newPagedServer(t, page("c1", true, "a", "b"), page("c2", true, "c", "d"), page("", false, "e"))
	c := srv.client(t)
	var ids []string
	for j, err := range c.SearchAll(context.Background(), client.SearchRequest{
		SearchFilter: client.SearchFilter{Queue: "q"}, Limit: 2,
	}) {
		require.NoError(t, err)
		ids = append(ids, j.ID)
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, ids)
	reqs := srv.requests()
	require.Len(t, reqs, 3)
	require.Nil(t, reqs[0]["cursor"])
	require.Equal(t, "c1", reqs[1]["cursor"])
	require.Equal(t, "c2", reqs[2]["cursor"])
	for _, r := range reqs {
		require.Equal(t, "q", r["queue"], "every page keeps the filter")
		require.EqualValues(t, 2, r["limit"])
	}
}

func TestSearchPagesStopsWhenTheCallerDoes(t *testing.T) {
	t.Parallel()
	srv := newPagedServer(t, page("c1", true, "a"), page("c2", true, "b"))
	n := 0
	for p, err := range srv.client(t).SearchPages(context.Background(), client.SearchRequest{}) {
		require.NoError(t, err)
		require.Len(t, p.Jobs, 1)
		n++
		break
	}
	require.Equal(t, 1, n)
	require.Len(t, srv.requests(), 1, "no page is fetched after the break")
}

func TestSearchAllYieldsAnErrorLast(t *testing.T) {
	t.Parallel()
	srv := newPagedServer(t, page("c1", true, "a"),
		`!400 {"error":{"code":"bad_request","message":"cursor expired","field":"cursor"}}`)
	var ids []string
	var last error
	for j, err := range srv.client(t).SearchAll(context.Background(), client.SearchRequest{}) {
		if err != nil {
			last = err
			continue
		}
		ids = append(ids, j.ID)
	}
	require.Equal(t, []string{"a"}, ids)
	require.True(t, client.IsBadRequest(last), "%v", last)
	e, _ := client.AsError(last)
	require.Equal(t, "cursor", e.Field)
}

func TestSearchPagesRefusesHasMoreWithoutCursor(t *testing.T) {
	t.Parallel()
	srv := newPagedServer(t, page("", true, "a"))
	var errs []error
	for _, err := range srv.client(t).SearchPages(context.Background(), client.SearchRequest{}) {
		errs = append(errs, err)
	}
	require.Len(t, errs, 2)
	require.NoError(t, errs[0])
	require.ErrorContains(t, errs[1], "no cursor")
	require.Len(t, srv.requests(), 1)
}
