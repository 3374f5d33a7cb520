package shard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

const (
	testTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	testTraceState  = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
)

// traceOf is the trace context a job's JSON (fetched, read or searched)
// carries.
func traceOf(j map[string]any) (parent, state string) {
	parent, _ = j["traceparent"].(string)
	state, _ = j["tracestate"].(string)
	return parent, state
}

// The trace context of an enqueue's headers is stored with the job, not
// in its payload, and given back unchanged on every fetch (a retry's
// too), on a read and in a search; a job enqueued without one has none.
func TestTraceContextKeptAcrossRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "traced", "payload": map[string]any{"n": 1},
		"max_retries": 2, "retry_backoff": "none"}, wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, testTraceState)
	require.Equal(t, 201, r.Status, string(r.Raw))
	id := r.Body["job_id"].(string)
	plain := b.enqueue(map[string]any{"queue": "plain"})

	f := b.fetch([]string{"traced"}, nil)
	require.Equal(t, 200, f.Status, string(f.Raw))
	p, s := traceOf(f.Body)
	require.Equal(t, testTraceParent, p)
	require.Equal(t, testTraceState, s)
	require.Equal(t, map[string]any{"n": 1.0}, f.Body["payload"], "the payload is the producer's alone")

	r = b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": "boom", "worker_id": "w1", "lease_token": f.Body["lease_token"]})
	require.Equal(t, 200, r.Status, string(r.Raw))
	var again resp
	eventually(t, 10*time.Second, func() bool { again = b.fetch([]string{"traced"}, nil); return again.Status == 200 }, "the retry is fetched")
	require.EqualValues(t, 2, again.Body["attempt"])
	p, s = traceOf(again.Body)
	require.Equal(t, testTraceParent, p, "kept across the retry")
	require.Equal(t, testTraceState, s)

	p, s = traceOf(b.job(id))
	require.Equal(t, testTraceParent, p)
	require.Equal(t, testTraceState, s)
	r = b.call("POST", "/api/v1/jobs/search", map[string]any{"queue": "traced"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	jobs := r.Body["jobs"].([]any)
	require.Len(t, jobs, 1)
	p, s = traceOf(jobs[0].(map[string]any))
	require.Equal(t, testTraceParent, p)
	require.Equal(t, testTraceState, s)

	pj := b.job(plain)
	require.NotContains(t, pj, "traceparent", "omitted when the job has none")
	require.NotContains(t, pj, "tracestate")
	pf := b.fetch([]string{"plain"}, nil)
	require.NotContains(t, pf.Body, "traceparent")
}

// A batch's headers apply to the jobs and the callback that name no trace
// context of their own; a job's own fields win. A chain's steps continue
// the trace of the step before unless they name their own.
func TestTraceContextOfBatchesAndChains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const own = "00-11111111111111111111111111111111-2222222222222222-00"
	const step = "00-33333333333333333333333333333333-4444444444444444-01"
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{
		"jobs": []any{
			map[string]any{"queue": "members", "payload": 1},
			map[string]any{"queue": "members", "payload": 2, "traceparent": own},
		},
		"batch": map[string]any{"callback_queue": "done"},
	}, wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, testTraceState)
	require.Equal(t, 201, r.Status, string(r.Raw))
	ids := r.Body["job_ids"].([]any)
	p, s := traceOf(b.job(ids[0].(string)))
	require.Equal(t, testTraceParent, p)
	require.Equal(t, testTraceState, s)
	p, s = traceOf(b.job(ids[1].(string)))
	require.Equal(t, own, p, "the job's own, not the header's")
	require.Empty(t, s, "never a header's tracestate beside the job's own traceparent")

	for range 2 {
		f := b.fetch([]string{"members"}, nil)
		require.Equal(t, 200, f.Status, string(f.Raw))
		r = b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{"worker_id": "w1", "lease_token": f.Body["lease_token"]})
		require.Equal(t, 200, r.Status, string(r.Raw))
	}
	var cb resp
	eventually(t, 10*time.Second, func() bool { cb = b.fetch([]string{"done"}, nil); return cb.Status == 200 }, "the callback is enqueued")
	p, s = traceOf(cb.Body)
	require.Equal(t, testTraceParent, p, "the callback takes the batch's headers")
	require.Equal(t, testTraceState, s)

	// A chain: step 1 continues the first job's trace, step 2 names its own.
	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "s0", "chain": map[string]any{"steps": []any{
		map[string]any{}, map[string]any{"queue": "s1"}, map[string]any{"queue": "s2", "traceparent": step},
	}}}, wire.TraceParentHeader, testTraceParent)
	require.Equal(t, 201, r.Status, string(r.Raw))
	for i, want := range []string{testTraceParent, testTraceParent, step} {
		q := []string{"s0", "s1", "s2"}[i]
		var f resp
		eventually(t, 10*time.Second, func() bool { f = b.fetch([]string{q}, nil); return f.Status == 200 }, "step "+q)
		p, _ = traceOf(f.Body)
		require.Equal(t, want, p, "step %d", i)
		r = b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{"worker_id": "w1", "lease_token": f.Body["lease_token"]})
		require.Equal(t, 200, r.Status, string(r.Raw))
	}
}

// A bad trace context is a 400 naming the header or field, and the
// request stores nothing.
func TestTraceContextRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	okJob := map[string]any{"queue": "q"}
	for _, tc := range []struct {
		name, path string
		body       any
		hdr        []string
		field      string
	}{
		{"uppercase hex", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, strings.ToUpper(testTraceParent)}, "traceparent"},
		{"zero trace id", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, "traceparent"},
		{"zero parent id", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}, "traceparent"},
		{"version ff", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, "ff" + testTraceParent[2:]}, "traceparent"},
		{"other version", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, "01" + testTraceParent[2:]}, "traceparent"},
		{"bad flags", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, testTraceParent[:53] + "0g"}, "traceparent"},
		{"too long", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, testTraceParent + "-00"}, "traceparent"},
		{"state alone", "/api/v1/enqueue", okJob, []string{wire.TraceStateHeader, "a=1"}, "tracestate"},
		{"state key", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, "Upper=1"}, "tracestate"},
		{"state twice", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, "a=1,a=2"}, "tracestate"},
		{"33 members", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, members(33)}, "tracestate"},
		{"513 bytes", "/api/v1/enqueue", okJob, []string{wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, "a=" + strings.Repeat("x", 255) + ",b=" + strings.Repeat("y", 253)}, "tracestate"},
		{"body field", "/api/v1/enqueue", map[string]any{"queue": "q", "traceparent": "nope"}, nil, "traceparent"},
		{"batch header", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{okJob}}, []string{wire.TraceParentHeader, "nope"}, "traceparent"},
		{"batch item", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{okJob, okJob, okJob, map[string]any{"queue": "q", "traceparent": "00-x"}}}, nil, "jobs[3].traceparent"},
		{"batch item state", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{okJob, map[string]any{"queue": "q", "tracestate": "a=1"}}}, nil, "jobs[1].tracestate"},
		{"batch callback", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{okJob}, "batch": map[string]any{"callback_queue": "cb", "traceparent": "x"}}, nil, "batch.traceparent"},
		{"chain step", "/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "s", "traceparent": "x"}}}}, nil, "chain.steps[1].traceparent"},
		{"chain first step", "/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": []any{map[string]any{"traceparent": testTraceParent}}}}, nil, "chain.steps[0]"},
	} {
		r := b.call("POST", tc.path, tc.body, tc.hdr...)
		require.Equal(t, 400, r.Status, "%s: %s", tc.name, r.Raw)
		require.Equal(t, tc.field, errField(r), "%s: %s", tc.name, r.Raw)
	}
	require.Equal(t, 204, b.fetch([]string{"q"}, nil).Status, "nothing was stored")

	// The limits themselves pass: 32 members, 512 bytes.
	r := b.call("POST", "/api/v1/enqueue", okJob, wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, members(32))
	require.Equal(t, 201, r.Status, string(r.Raw))
	full := "a=" + strings.Repeat("x", 255) + ",b=" + strings.Repeat("y", 252)
	require.Len(t, full, 512)
	r = b.call("POST", "/api/v1/enqueue", okJob, wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, full)
	require.Equal(t, 201, r.Status, string(r.Raw))
	_, s := traceOf(b.job(r.Body["job_id"].(string)))
	require.Equal(t, full, s)
}

func members(n int) string {
	m := make([]string, n)
	for i := range m {
		m[i] = fmt.Sprintf("k%d=v", i)
	}
	return strings.Join(m, ",")
}

// Each run of a schedule starts a new trace: a fresh, valid, sampled
// traceparent per job, as does a run by hand.
func TestScheduleRunsStartTraces(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	s := b.createSchedule(map[string]any{"name": "tick", "queue": "ticks", "cron": "@every 1s"})
	id := s["id"].(string)
	b.tick(clock, time.Second, id)
	b.tick(clock, time.Second, id)
	r := b.call("POST", "/api/v1/schedules/"+id+"/run", nil)
	require.Equal(t, 201, r.Status, string(r.Raw))
	seen := map[string]bool{}
	for {
		f := b.fetch([]string{"ticks"}, nil)
		if f.Status == 204 {
			break
		}
		require.Equal(t, 200, f.Status, string(f.Raw))
		p, st := traceOf(f.Body)
		require.NoError(t, wire.CheckTraceParent(p), "job %v", f.Body["job_id"])
		require.True(t, strings.HasSuffix(p, "-01"), "sampled: %s", p)
		require.Empty(t, st)
		require.False(t, seen[p[3:35]], "a new trace id per run")
		seen[p[3:35]] = true
	}
	require.GreaterOrEqual(t, len(seen), 3, "two runs of the sweep and one by hand")
}
