package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// lease is one fetched lease: its job and its token.
type lease struct{ id, token string }

// fetchLease fetches one job of queue for worker, waiting up to 5 s (a
// lease of another worker running out).
func (b *bundle) fetchLease(queue, worker string, leaseSeconds int) lease {
	b.t.Helper()
	f := b.fetch([]string{queue}, map[string]any{"worker_id": worker, "timeout": 5, "lease_duration": leaseSeconds})
	require.Equal(b.t, 200, f.Status, string(f.Raw))
	tok, _ := f.Body["lease_token"].(string)
	require.NotEmpty(b.t, tok, "a fetch names its lease")
	return lease{id: f.Body["job_id"].(string), token: tok}
}

// Worker A's lease runs out and the job goes to worker B: A's token, with
// no worker_id (which used to settle whatever lease the job held),
// settles nothing of B's, and B's does.
func TestStaleLeaseTokenSettlesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	queues := []string{"ack", "fail", "hb", "batch"}
	for _, q := range queues {
		b.enqueue(map[string]any{"queue": q})
	}
	b.enqueue(map[string]any{"queue": "keep"})
	a := map[string]lease{}
	for _, q := range queues {
		a[q] = b.fetchLease(q, "A", 1)
	}
	kept := b.fetchLease("keep", "A", 600)
	bl := map[string]lease{}
	for _, q := range queues {
		bl[q] = b.fetchLease(q, "B", 600) // waits for A's lease to run out
		require.Equal(t, a[q].id, bl[q].id)
		require.NotEqual(t, a[q].token, bl[q].token)
	}
	heldByB := func(id string) {
		t.Helper()
		d := b.job(id)
		require.Equal(t, "active", d["state"])
		require.Equal(t, "B", d["worker"].(map[string]any)["id"])
		require.Nil(t, d["progress"])
		require.Len(t, d["errors"], 1, "only A's lease running out")
	}

	r := b.call("POST", "/api/v1/ack/"+a["ack"].id, map[string]any{"lease_token": a["ack"].token, "result": map[string]any{"by": "A"}})
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, "lease_mismatch", errCode(r))
	heldByB(a["ack"].id)
	r = b.call("POST", "/api/v1/ack/"+bl["ack"].id, map[string]any{"lease_token": bl["ack"].token})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "completed", b.job(bl["ack"].id)["state"])

	r = b.call("POST", "/api/v1/fail/"+a["fail"].id, map[string]any{"lease_token": a["fail"].token, "error": "A gave up"})
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, "lease_mismatch", errCode(r))
	heldByB(a["fail"].id)
	r = b.call("POST", "/api/v1/fail/"+bl["fail"].id, map[string]any{"lease_token": bl["fail"].token, "error": "B gave up"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, b.job(bl["fail"].id)["errors"], 2)

	hbOf := func(l lease) string {
		t.Helper()
		r := b.call("POST", "/api/v1/heartbeat", map[string]any{"jobs": map[string]any{
			l.id: map[string]any{"lease_token": l.token, "progress": map[string]any{"current": 1}}}})
		require.Equal(t, 200, r.Status, string(r.Raw))
		return r.Body["jobs"].(map[string]any)[l.id].(map[string]any)["status"].(string)
	}
	before := b.job(a["hb"].id)["lease_expires_at"]
	require.Equal(t, "lost", hbOf(a["hb"]))
	heldByB(a["hb"].id)
	require.Equal(t, before, b.job(a["hb"].id)["lease_expires_at"], "A's heartbeat extended nothing")
	require.Equal(t, "ok", hbOf(bl["hb"]))

	// In a batch, the stale token fails its own entry only.
	r = b.call("POST", "/api/v1/ack/batch", map[string]any{"acks": []map[string]any{
		{"job_id": a["batch"].id, "lease_token": a["batch"].token},
		{"job_id": kept.id, "lease_token": kept.token},
	}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	res := r.Body["results"].([]any)
	require.Equal(t, "lease_mismatch", res[0].(map[string]any)["error"].(map[string]any)["code"])
	require.Equal(t, "completed", res[1].(map[string]any)["status"])
	heldByB(a["batch"].id)
	r = b.call("POST", "/api/v1/ack/batch", map[string]any{"worker_id": "B", "acks": []map[string]any{
		{"job_id": bl["batch"].id, "lease_token": bl["batch"].token}}})
	require.Equal(t, "completed", r.Body["results"].([]any)[0].(map[string]any)["status"], string(r.Raw))
}

// A release takes the attempt back, so the next lease of the job has the
// same attempt number: a release naming the earlier lease by its token
// leaves the later one alone.
func TestReleaseOfAnEarlierLeaseLeavesTheNextAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "rel"})
	first := b.fetchLease("rel", "w", 60)
	r := b.call("POST", "/api/v1/release", map[string]any{"worker_id": "w", "jobs": []map[string]any{
		{"job_id": id, "attempt": 1, "lease_token": first.token}}})
	require.Equal(t, []any{id}, r.Body["released"], string(r.Raw))
	second := b.fetchLease("rel", "w", 60)
	require.NotEqual(t, first.token, second.token)

	r = b.call("POST", "/api/v1/release", map[string]any{"worker_id": "w", "jobs": []map[string]any{
		{"job_id": id, "attempt": 1, "lease_token": first.token}}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Body["released"])
	require.Equal(t, "active", b.job(id)["state"])
	r = b.call("POST", "/api/v1/ack/"+id, map[string]any{"lease_token": second.token})
	require.Equal(t, 200, r.Status, string(r.Raw))
}

// A token that no fetch made is bad input naming its field, and changes
// nothing.
func TestMalformedLeaseTokenIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l := func() lease { b.enqueue(map[string]any{"queue": "bad"}); return b.fetchLease("bad", "w", 60) }()
	for _, tc := range []struct {
		path, field string
		body        map[string]any
	}{
		{"/api/v1/ack/" + l.id, "lease_token", map[string]any{"lease_token": "nope"}},
		{"/api/v1/fail/" + l.id, "lease_token", map[string]any{"lease_token": l.token + "x", "error": "e"}},
		{"/api/v1/ack/batch", "acks[0].lease_token", map[string]any{"acks": []map[string]any{{"job_id": l.id, "lease_token": "nope"}}}},
		{"/api/v1/heartbeat", "jobs." + l.id + ".lease_token", map[string]any{"jobs": map[string]any{l.id: map[string]any{"lease_token": "nope"}}}},
		{"/api/v1/release", "jobs[0].lease_token", map[string]any{"worker_id": "w", "jobs": []map[string]any{{"job_id": l.id, "attempt": 1, "lease_token": "nope"}}}},
		{"/api/v1/release", "jobs[0].lease_token", map[string]any{"worker_id": "w", "jobs": []map[string]any{{"job_id": l.id, "attempt": 2, "lease_token": l.token}}}},
	} {
		r := b.call("POST", tc.path, tc.body)
		require.Equal(t, 400, r.Status, "%s: %s", tc.path, r.Raw)
		require.Equal(t, tc.field, errField(r), tc.path)
	}
	require.Equal(t, "active", b.job(l.id)["state"])
	r := b.call("POST", "/api/v1/ack/"+l.id, map[string]any{"lease_token": l.token, "worker_id": "w"})
	require.Equal(t, 200, r.Status, string(r.Raw))
}
