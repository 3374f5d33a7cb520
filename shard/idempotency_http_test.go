package shard

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/wire"
)

// pendingIn is queue q's count of pending jobs as b reads it.
func pendingIn(b *bundle, ns, q string) float64 {
	b.t.Helper()
	r := b.call("GET", "/api/v1/queues/"+q, nil, wire.ShardNamespaceHeader, ns)
	if r.Status == 404 {
		return 0
	}
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	return r.Body["counts"].(map[string]any)["pending"].(float64)
}

func (b *bundle) keyed(ns, method, path, key string, body any) resp {
	b.t.Helper()
	return b.call(method, path, body, wire.ShardNamespaceHeader, ns, wire.IdempotencyKeyHeader, key)
}

// An enqueue sent again with its Idempotency-Key gets the first answer,
// 200 and marked replayed, and nothing more is enqueued; the same key
// with another body is 422 naming the header; another tenant's same key
// is its own; a bad key is 400 naming the header, with nothing stored.
func TestIdempotentEnqueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := map[string]any{"queue": "q", "payload": map[string]int{"n": 1}}
	first := b.keyed(testNS, "POST", "/api/v1/enqueue", "order-1", job)
	require.Equal(t, 201, first.Status, string(first.Raw))
	require.Empty(t, first.Header.Get(wire.IdempotencyReplayedHeader))

	again := b.keyed(testNS, "POST", "/api/v1/enqueue", "order-1", job)
	require.Equal(t, 200, again.Status, string(again.Raw))
	require.Equal(t, "true", again.Header.Get(wire.IdempotencyReplayedHeader))
	require.Equal(t, string(first.Raw), string(again.Raw), "the first answer, byte for byte")
	require.EqualValues(t, 1, pendingIn(b, testNS, "q"))

	other := b.keyed(testNS, "POST", "/api/v1/enqueue", "order-1", map[string]any{"queue": "q", "payload": 2})
	require.Equal(t, 422, other.Status, string(other.Raw))
	require.Equal(t, string(wire.CodeIdempotencyKeyReused), errCode(other))
	require.Equal(t, wire.IdempotencyKeyHeader, errField(other))
	require.EqualValues(t, 1, pendingIn(b, testNS, "q"))

	theirs := b.keyed(otherTestNS, "POST", "/api/v1/enqueue", "order-1", map[string]any{"queue": "q", "payload": 2})
	require.Equal(t, 201, theirs.Status, string(theirs.Raw), "another tenant's key of the same name is its own")
	require.NotEqual(t, first.Body["job_id"], theirs.Body["job_id"])

	for _, bad := range []string{strings.Repeat("k", 256), "caf\u00e9"} {
		r := b.keyed(testNS, "POST", "/api/v1/enqueue", bad, map[string]any{"queue": "bad"})
		require.Equal(t, 400, r.Status, string(r.Raw))
		require.Equal(t, wire.IdempotencyKeyHeader, errField(r))
	}
	for _, vals := range [][]string{{""}, {"a", "b"}} {
		req, err := http.NewRequest("POST", b.url+"/api/v1/enqueue", strings.NewReader(`{"queue":"bad"}`))
		require.NoError(t, err)
		b.setHeaders(req)
		req.Header.Set("Content-Type", "application/json")
		req.Header[wire.IdempotencyKeyHeader] = vals
		res, err := b.client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 400, res.StatusCode, "%q", vals)
	}
	require.Zero(t, pendingIn(b, testNS, "bad"), "nothing refused was stored")
	// The longest key is fine.
	require.Equal(t, 201, b.keyed(testNS, "POST", "/api/v1/enqueue", strings.Repeat("k", 255), map[string]any{"queue": "q"}).Status)

	// A route that does not take a key refuses it, doing nothing.
	id := first.Body["job_id"].(string)
	r := b.keyed(testNS, "POST", "/api/v1/jobs/"+id+"/cancel", "c-1", nil)
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, wire.IdempotencyKeyHeader, errField(r))
	require.Equal(t, "pending", b.job(id)["state"])
}

// A batch, a schedule and a webhook endpoint created again under their
// key answer the first's ids (and the endpoint's secret, shown once).
func TestIdempotentCreates(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	b := setup(t, hookConfig(rcv))
	for _, c := range []struct {
		path string
		body map[string]any
		ids  []string
	}{
		{"/api/v1/enqueue/batch", map[string]any{"jobs": []map[string]any{{"queue": "q"}, {"queue": "q"}},
			"batch": map[string]any{"callback_queue": "done"}}, []string{"batch_id", "job_ids"}},
		{"/api/v1/schedules", map[string]any{"name": "nightly", "cron": "0 3 * * *", "timezone": "UTC", "queue": "q"}, []string{"id"}},
		{"/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"*"}, "secret": true}, []string{"id", "secret"}},
	} {
		first := b.keyed(testNS, "POST", c.path, "k-"+c.path, c.body)
		require.Equal(t, 201, first.Status, "%s: %s", c.path, first.Raw)
		again := b.keyed(testNS, "POST", c.path, "k-"+c.path, c.body)
		require.Equal(t, 200, again.Status, "%s: %s", c.path, again.Raw)
		require.Equal(t, "true", again.Header.Get(wire.IdempotencyReplayedHeader))
		require.Equal(t, string(first.Raw), string(again.Raw), "%s: the first answer, byte for byte", c.path)
		for _, f := range c.ids {
			require.NotEmpty(t, first.Body[f], "%s: %s", c.path, f)
			require.Equal(t, first.Body[f], again.Body[f], "%s: %s", c.path, f)
		}
	}
	require.EqualValues(t, 2, pendingIn(b, testNS, "q"), "one batch of two")
	require.Len(t, b.call("GET", "/api/v1/schedules", nil).Body["schedules"], 1)
	require.Len(t, b.call("GET", "/api/v1/webhooks", nil).Body["webhooks"], 1)
}

// Concurrent sends of one key: one applies, the others get its answer.
func TestIdempotentConcurrentRepeats(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var wg sync.WaitGroup
	out := make([]resp, 8)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = b.keyed(testNS, "POST", "/api/v1/enqueue", "same", map[string]any{"queue": "q"})
		}()
	}
	wg.Wait()
	created := 0
	for _, r := range out {
		require.Contains(t, []int{200, 201}, r.Status, string(r.Raw))
		if r.Status == 201 {
			created++
		}
		require.Equal(t, out[0].Body["job_id"], r.Body["job_id"])
	}
	require.Equal(t, 1, created)
	require.EqualValues(t, 1, pendingIn(b, testNS, "q"))
}

// A key's record lasts 24 h by the leader's clock: then the leader's
// sweep removes it, and the key is free for another request.
func TestIdempotencyRecordsExpire(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	r := b.keyed(testNS, "POST", "/api/v1/enqueue", "k", map[string]any{"queue": "q"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	_, kept := engine.IdemRecordOf(b.srv.repl.DB(), testNS, "k")
	require.True(t, kept)
	clock.Advance(wire.IdempotencyTTL - time.Minute)
	require.Equal(t, 422, b.keyed(testNS, "POST", "/api/v1/enqueue", "k", map[string]any{"queue": "other"}).Status, "kept 24 h")
	eventually(t, 10*time.Second, func() bool {
		clock.Advance(10 * time.Second)
		_, kept := engine.IdemRecordOf(b.srv.repl.DB(), testNS, "k")
		return !kept
	}, "the leader's sweep removes the expired record")
	r = b.keyed(testNS, "POST", "/api/v1/enqueue", "k", map[string]any{"queue": "other"})
	require.Equal(t, 201, r.Status, string(r.Raw))
}

// The record is replicated with the job: an enqueue answered, its leader
// killed, the same request sent again through the new leader gets the
// same job id, and the group holds one job.
func TestIdempotencySurvivesALeaderKill(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	job := map[string]any{"queue": "q", "payload": 1}
	first := retryKeyed(t, g.nodes[1], "order-7", job)
	require.Equal(t, 201, first.Status, string(first.Raw))
	rest := g.killLeader()
	for _, via := range rest {
		again := retryKeyed(t, via, "order-7", job)
		require.Equal(t, 200, again.Status, string(again.Raw))
		require.Equal(t, "true", again.Header.Get(wire.IdempotencyReplayedHeader))
		require.Equal(t, first.Body["job_id"], again.Body["job_id"])
	}
	for _, n := range rest {
		eventually(t, 10*time.Second, func() bool { return pendingIn(n, testNS, "q") == 1 }, "one job on every live node")
	}
}

// retryKeyed sends a keyed enqueue through b until the group has a leader.
func retryKeyed(t *testing.T, b *bundle, key string, body any) resp {
	t.Helper()
	var r resp
	eventually(t, 20*time.Second, func() bool {
		r = b.keyed(testNS, "POST", "/api/v1/enqueue", key, body)
		return r.Status != 503
	}, "the keyed enqueue answered 503 throughout")
	return r
}
