package client_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// scripted answers each request with the next of its statuses (the last
// one repeats) and records what it was sent.
type scripted struct {
	mu       sync.Mutex
	statuses []int
	retryAft string
	seen     []*http.Request
	at       []time.Time
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.seen)
	s.seen, s.at = append(s.seen, r.Clone(r.Context())), append(s.at, time.Now())
	st := s.statuses[min(n, len(s.statuses)-1)]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if st >= 300 {
		if s.retryAft != "" {
			w.Header().Set("Retry-After", s.retryAft)
		}
		w.WriteHeader(st)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try later"}}`))
		return
	}
	w.WriteHeader(st)
	_, _ = w.Write([]byte(`{"job_id":"job_1","status":"pending"}`))
}

func (s *scripted) sent() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

func fastRetries() client.Option {
	return client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 4, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
}

// An enqueue answered 429 and 503 is sent again with its first key until
// it lands; a Retry-After is honoured.
func TestEnqueueRetriesWithOneKey(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{429, 503, 201}, retryAft: "1"}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "k", fastRetries())
	res, err := c.Enqueue(t.Context(), client.EnqueueRequest{Queue: "q"})
	require.NoError(t, err)
	require.Equal(t, "job_1", res.JobID)
	sent := s.sent()
	require.Len(t, sent, 3)
	key := sent[0].Header.Get(wire.IdempotencyKeyHeader)
	require.Len(t, key, 32)
	for _, r := range sent {
		require.Equal(t, key, r.Header.Get(wire.IdempotencyKeyHeader))
	}
	require.GreaterOrEqual(t, s.at[1].Sub(s.at[0]), time.Second, "Retry-After: 1 waited")

	// The next call is another request: another key.
	_, err = c.Enqueue(t.Context(), client.EnqueueRequest{Queue: "q"})
	require.NoError(t, err)
	require.NotEqual(t, key, s.sent()[3].Header.Get(wire.IdempotencyKeyHeader))
}

// The bounds: MaxAttempts sends at most, a Retry-After longer than the
// policy waits ends the retries, WithoutRetries sends once, and a POST
// without a key (an ack) is never sent twice.
func TestRetryBounds(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{503}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	_, err := client.New(srv.URL, "k", fastRetries()).Enqueue(t.Context(), client.EnqueueRequest{Queue: "q"})
	require.True(t, client.IsRetryable(err), "%v", err)
	require.Len(t, s.sent(), 4)

	long := &scripted{statuses: []int{429}, retryAft: "120"}
	srv2 := httptest.NewServer(long)
	t.Cleanup(srv2.Close)
	_, err = client.New(srv2.URL, "k", fastRetries()).Enqueue(t.Context(), client.EnqueueRequest{Queue: "q"})
	require.Error(t, err)
	require.Len(t, long.sent(), 1, "a Retry-After past MaxRetryAfter is the caller's")

	once := &scripted{statuses: []int{503}}
	srv3 := httptest.NewServer(once)
	t.Cleanup(srv3.Close)
	c := client.New(srv3.URL, "k", client.WithoutRetries())
	_, err = c.Enqueue(t.Context(), client.EnqueueRequest{Queue: "q"})
	require.Error(t, err)
	require.Len(t, once.sent(), 1)
	require.NotEmpty(t, once.sent()[0].Header.Get(wire.IdempotencyKeyHeader), "still keyed, for the caller's own retry")

	ack := &scripted{statuses: []int{503}}
	srv4 := httptest.NewServer(ack)
	t.Cleanup(srv4.Close)
	c = client.New(srv4.URL, "k", fastRetries())
	err = c.Ack(t.Context(), "job_1", nil)
	require.Error(t, err)
	require.Len(t, ack.sent(), 1, "an ack has no key: not sent again")
	require.Empty(t, ack.sent()[0].Header.Get(wire.IdempotencyKeyHeader))
	_, err = c.GetQueue(t.Context(), "q")
	require.Error(t, err)
	require.Len(t, ack.sent(), 5, "a GET is sent again")
}
