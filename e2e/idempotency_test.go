package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// droppingProxy passes requests to a gateway and loses the answer of the
// first enqueue it passed: the gateway enqueued, the client never hears.
type droppingProxy struct {
	target string
	mu     sync.Mutex
	keys   []string         // the Idempotency-Key of each enqueue passed on
	firsts []map[string]any // the answers the gateway gave them
}

func (p *droppingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if r.URL.Path == "/api/v1/enqueue" {
		var got map[string]any
		_ = json.Unmarshal(raw, &got)
		p.mu.Lock()
		p.keys = append(p.keys, r.Header.Get(wire.IdempotencyKeyHeader))
		p.firsts = append(p.firsts, got)
		first := len(p.keys) == 1
		p.mu.Unlock()
		if first {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close() // the answer is lost on the way
				return
			}
		}
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(raw)
}

// The Go SDK sends an enqueue again after its answer was lost, with the
// same Idempotency-Key: the gateway answers the first's job, and the
// queue holds one job.
func TestSDKRetriedEnqueueCreatesOneJob(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	p := &droppingProxy{target: shared.gateway}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	c := client.New(srv.URL, ct.OwnerKey)
	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "idem.sdk", Payload: map[string]any{"n": 1}})
	require.NoError(t, err)

	q, err := owner.GetQueue(ctx(t), "idem.sdk")
	require.NoError(t, err)
	require.EqualValues(t, 1, q.Counts.Pending, "one job, not two")
	p.mu.Lock()
	keys, firsts := append([]string(nil), p.keys...), append([]map[string]any(nil), p.firsts...)
	p.mu.Unlock()
	require.Len(t, keys, 2, "sent once, lost, sent again")
	require.NotEmpty(t, keys[0])
	require.Equal(t, keys[0], keys[1], "the retry carries the first send's key")
	require.Equal(t, firsts[0]["job_id"], res.JobID, "the lost answer's job")

	// Without retries the lost answer is the caller's error; the next
	// call has a key of its own.
	p2 := &droppingProxy{target: shared.gateway}
	srv2 := httptest.NewServer(p2)
	t.Cleanup(srv2.Close)
	once := client.New(srv2.URL, ct.OwnerKey, client.WithoutRetries())
	_, err = once.Enqueue(ctx(t), client.EnqueueRequest{Queue: "idem.sdk.once"})
	require.Error(t, err)
	_, err = once.Enqueue(ctx(t), client.EnqueueRequest{Queue: "idem.sdk.once"})
	require.NoError(t, err)
	p2.mu.Lock()
	require.Len(t, p2.keys, 2)
	require.NotEqual(t, p2.keys[0], p2.keys[1], "a new call, a new key")
	p2.mu.Unlock()
	q, err = owner.GetQueue(ctx(t), "idem.sdk.once")
	require.NoError(t, err)
	require.EqualValues(t, 2, q.Counts.Pending, "two calls, two jobs")

	// A key of the caller's own, sent again later, gets the first answer.
	kctx := client.WithIdempotencyKey(ctx(t), "order-1234")
	a, err := owner.Enqueue(kctx, client.EnqueueRequest{Queue: "idem.sdk.own"})
	require.NoError(t, err)
	b, err := owner.Enqueue(kctx, client.EnqueueRequest{Queue: "idem.sdk.own"})
	require.NoError(t, err)
	require.Equal(t, a.JobID, b.JobID)
	_, err = owner.Enqueue(kctx, client.EnqueueRequest{Queue: "idem.sdk.other"})
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 422, e.Status)
	require.Equal(t, client.CodeIdempotencyKeyReused, e.Code)
	require.Equal(t, wire.IdempotencyKeyHeader, e.Field)
}
