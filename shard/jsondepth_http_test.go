package shard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// nested is a JSON value whose arrays and objects nest depth levels, with
// brackets in a string at the bottom that must not count.
func nested(depth int) json.RawMessage {
	var b strings.Builder
	for i := range depth {
		if i%2 == 0 {
			b.WriteString(`[`)
		} else {
			b.WriteString(`{"k":`)
		}
	}
	b.WriteString(`"[[{{"`)
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString(`]`)
		} else {
			b.WriteString(`}`)
		}
	}
	return json.RawMessage(b.String())
}

// A value a job stores nests at most wire.MaxJSONDepth levels, whatever
// field carries it: past it the request is a 400 naming the field and
// nothing changes; at it the value is stored and served back whole.
func TestStoredJSONDepthIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	deep, ok := nested(wire.MaxJSONDepth+1), nested(wire.MaxJSONDepth)

	for _, c := range []struct {
		path, field string
		body        any
	}{
		{"/api/v1/enqueue", "payload", map[string]any{"queue": "deep", "payload": deep}},
		{"/api/v1/enqueue/batch", "jobs[1].payload", map[string]any{"jobs": []any{
			map[string]any{"queue": "deep"}, map[string]any{"queue": "deep", "payload": deep}}}},
		{"/api/v1/enqueue", "chain.steps[1].payload", map[string]any{"queue": "deep", "chain": map[string]any{
			"steps": []any{map[string]any{}, map[string]any{"queue": "deep", "payload": deep}}}}},
	} {
		r := b.call("POST", c.path, c.body)
		require.Equal(t, 400, r.Status, "%s: %s", c.path, r.Raw)
		require.Equal(t, c.field, errField(r), "%s", r.Raw)
		require.Contains(t, string(r.Raw), "257 levels deep; the limit is 256")
	}
	r := b.call("POST", "/api/v1/jobs/search", map[string]any{})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Body["jobs"], "a refused enqueue stored a job")

	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "deep", "payload": ok})
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"deep"}, "worker_id": "w1", "max": 1, "timeout": 0})
	require.Equal(t, 200, r.Status, string(r.Raw))
	jobs := r.Body["jobs"].([]any)
	require.Len(t, jobs, 1)
	got, err := json.Marshal(jobs[0].(map[string]any)["payload"])
	require.NoError(t, err)
	require.Equal(t, wire.MaxJSONDepth, wire.JSONDepth(got), "the payload at the limit is served whole")
	id := jobs[0].(map[string]any)["job_id"].(string)

	for _, c := range []struct {
		path, field string
		body        any
	}{
		{"/api/v1/ack/" + id, "result", map[string]any{"worker_id": "w1", "result": deep}},
		{"/api/v1/ack/batch", "acks[0].result", map[string]any{"worker_id": "w1", "acks": []any{map[string]any{"job_id": id, "result": deep}}}},
		{"/api/v1/heartbeat", "checkpoint", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{"checkpoint": deep}}}},
		{"/api/v1/heartbeat", "progress", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{"progress": deep}}}},
	} {
		r = b.call("POST", c.path, c.body)
		require.Equal(t, 400, r.Status, "%s: %s", c.path, r.Raw)
		require.Equal(t, c.field, errField(r), "%s", r.Raw)
	}
	j := b.job(id)
	require.Equal(t, "active", j["state"], "a refused ack completed the job")
	require.Nil(t, j["checkpoint"])
	r = b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1", "result": ok})
	require.Equal(t, 200, r.Status, string(r.Raw))
}
