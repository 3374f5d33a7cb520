package shard

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// A worker that long-polls and goes away (curl -m 2, a worker restarted
// mid-poll) must not be leased the next job: a live worker gets it at once.

// ghostFetch sends a fetch on a raw connection to addr and returns the
// connection; closing it is the worker going away.
func ghostFetch(t *testing.T, addr, path, body string) net.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, testCA(t).Creds(t, pkitest.Gateway).Client(nil))
	require.NoError(t, err)
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: shard\r\n%s: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, wire.ShardNamespaceHeader, testNS, len(body), body)
	require.NoError(t, err)
	return conn
}

// liveFetch long-polls as worker "live" in the background.
func liveFetch(b *bundle, path string) <-chan resp {
	out := make(chan resp, 1)
	body := map[string]any{"queues": []string{"q"}, "worker_id": "live", "timeout": 10}
	if path == "/api/v1/fetch/batch" {
		body["max"] = 5
	}
	go func() { out <- b.call("POST", path, body) }()
	return out
}

func TestGhostFetchLeasesNothing(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/api/v1/fetch", "/api/v1/fetch/batch"} {
		t.Run(path, func(t *testing.T) {
			b := setup(t)
			ghost := ghostFetch(t, b.srv.Addr(), path, `{"queues":["q"],"worker_id":"ghost","timeout":30}`)
			eventually(t, 5*time.Second, func() bool { return b.srv.waiters.Parked(testNS, "q") == 1 }, "the ghost parks")
			require.NoError(t, ghost.Close())
			live := liveFetch(b, path)
			eventually(t, 5*time.Second, func() bool { return b.srv.waiters.Parked(testNS, "q") == 2 }, "the live worker parks behind it")

			start := time.Now()
			id := b.enqueue(map[string]any{"queue": "q"})
			r := <-live
			took := time.Since(start)
			require.Equal(t, 200, r.Status, string(r.Raw))
			require.Less(t, took, time.Second, "the live worker gets the job within a second")
			require.Contains(t, string(r.Raw), id)
			d := b.job(id)
			require.Equal(t, "active", d["state"])
			require.Equal(t, 1.0, d["attempt"])
			require.Equal(t, "live", d["worker"].(map[string]any)["id"])
			require.NotContains(t, string(mustJSON(d["timeline"])), "ghost", "nothing was ever leased to the ghost")
		})
	}
}

// goneNow is a Gone of a worker that left while its fetch was applied: a
// fetch that finds a job at once looks only after leasing it.
func goneNow() bool { return true }

// A worker that goes away while its fetch is being applied gets its
// lease released at once: the job is pending again, the attempt not
// counted, and the timeline says why.
func TestFetchReleasesWhenTheWorkerLeavesMeanwhile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q", "max_retries": 0})
	zero := 0.0
	got, err := b.srv.Service().Fetch(context.Background(), testNS, &wire.FetchRequest{Queues: []string{"q"}, WorkerID: "ghost", Timeout: &zero}, goneNow)
	require.NoError(t, err)
	require.Nil(t, got, "nothing is handed to a worker that left")
	d := b.job(id)
	require.Equal(t, "pending", d["state"])
	require.Equal(t, 0.0, d["attempt"])
	tl := d["timeline"].([]any)
	last := tl[len(tl)-1].(map[string]any)
	require.Equal(t, "lease_released", last["event"])
	require.Contains(t, last["detail"], "worker ghost went away")

	// The same for a batch.
	other := b.enqueue(map[string]any{"queue": "q"})
	one := 5
	jobs, err := b.srv.Service().FetchBatch(context.Background(), testNS, service.Limits{}, &wire.FetchBatchRequest{
		FetchRequest: wire.FetchRequest{Queues: []string{"q"}, WorkerID: "ghost", Timeout: &zero}, Max: &one}, goneNow, nil)
	require.NoError(t, err)
	require.Empty(t, jobs)
	for _, x := range []string{id, other} {
		require.Equal(t, "pending", b.job(x)["state"], x)
	}

	// With no retries to spare, the job still has its one attempt.
	f := b.fetch([]string{"q"}, nil)
	require.Equal(t, id, f.Body["job_id"])
	require.Equal(t, 1.0, f.Body["attempt"])
}

func TestReleaseEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q"})
	f := b.fetch([]string{"q"}, nil) // worker w1, attempt 1
	require.Equal(t, 200, f.Status)
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"worker_id": "w1"}, "jobs"},
		{map[string]any{"worker_id": "w1", "jobs": []map[string]any{{"job_id": "nope", "attempt": 1}}}, "jobs[0].job_id"},
		{map[string]any{"worker_id": "w1", "jobs": []map[string]any{{"job_id": id}}}, "jobs[0].attempt"},
		{map[string]any{"worker_id": "w1", "jobs": []map[string]any{{"job_id": id, "attempt": 1}}, "extra": 1}, "extra"},
	} {
		r := b.call("POST", "/api/v1/release", tc.body)
		require.Equal(t, 400, r.Status, string(r.Raw))
		require.Equal(t, tc.field, errField(r), string(r.Raw))
	}
	require.Equal(t, "active", b.job(id)["state"], "bad input changes nothing")
	// Only the worker holding the lease, for its attempt.
	for _, body := range []map[string]any{
		{"worker_id": "w2", "jobs": []map[string]any{{"job_id": id, "attempt": 1}}},
		{"worker_id": "w1", "jobs": []map[string]any{{"job_id": id, "attempt": 2}}},
	} {
		r := b.call("POST", "/api/v1/release", body)
		require.Equal(t, 200, r.Status, string(r.Raw))
		require.Empty(t, r.Body["released"])
	}
	require.Equal(t, "active", b.job(id)["state"])
	r := b.call("POST", "/api/v1/release", map[string]any{"worker_id": "w1", "jobs": []map[string]any{{"job_id": id, "attempt": 1}}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{id}, r.Body["released"])
	require.Equal(t, "pending", b.job(id)["state"])
}

// Through a follower: the follower forwards the fetch and the leader sees
// the follower's connection, open; the follower releases the lease when
// the answer finds its worker gone.
func TestGhostFetchThroughAFollower(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 2)
	leader, follower := g.leaderAndFollower()
	ghost := ghostFetch(t, follower.srv.Addr(), "/api/v1/fetch", `{"queues":["q"],"worker_id":"ghost","timeout":30}`)
	eventually(t, 5*time.Second, func() bool { return leader.srv.waiters.Parked(testNS, "q") == 1 }, "the forwarded ghost parks on the leader")
	require.NoError(t, ghost.Close())
	live := liveFetch(leader, "/api/v1/fetch")
	eventually(t, 5*time.Second, func() bool { return leader.srv.waiters.Parked(testNS, "q") == 2 }, "the live worker parks behind it")

	start := time.Now()
	id := retry(t, leader, "POST", "/api/v1/enqueue", map[string]any{"queue": "q"}).Body["job_id"].(string)
	r := <-live
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, id, r.Body["job_id"])
	d := leader.job(id)
	require.Equal(t, "live", d["worker"].(map[string]any)["id"])
	require.Equal(t, 1.0, d["attempt"], "the ghost's attempt was not counted")
	require.Contains(t, string(mustJSON(d["timeline"])), "lease_released")
}
