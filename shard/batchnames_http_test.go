package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch's refused job or ack is named by its place in the batch, in
// the field and in the message, whatever the valid ones before it did
// (their queue shared, their checks made without a place).
func TestBatchRefusalsNameTheirPlace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok := map[string]any{"queue": "q", "payload": map[string]any{"n": 1}}
	for _, tc := range []struct {
		path, field, message string
		body                 any
	}{
		{"/api/v1/enqueue/batch", "jobs[2].queue", "",
			map[string]any{"jobs": []any{ok, ok, map[string]any{"queue": "no spaces"}}}},
		{"/api/v1/enqueue/batch", "jobs[1].retry_max_delay", "jobs[1].retry_max_delay must be a duration",
			map[string]any{"jobs": []any{ok, map[string]any{"queue": "q", "retry_max_delay": "soon"}}}},
		{"/api/v1/enqueue/batch", "jobs[2].fairness_key", "jobs[2].fairness_key must be printable text",
			map[string]any{"jobs": []any{ok, ok, map[string]any{"queue": "q", "fairness_key": "a\u0001"}}}},
		{"/api/v1/ack/batch", "acks[2].step_status", "",
			map[string]any{"worker_id": "w", "acks": []any{
				map[string]any{"job_id": "job_x"}, map[string]any{"job_id": "job_y"}, map[string]any{"job_id": "job_z", "step_status": "stop"}}}},
		{"/api/v1/ack/batch", "acks[1].lease_token", "acks[1].lease_token must be the lease_token",
			map[string]any{"worker_id": "w", "acks": []any{map[string]any{"job_id": "job_x"}, map[string]any{"job_id": "job_y", "lease_token": "nope"}}}},
	} {
		r := b.call("POST", tc.path, tc.body)
		require.Equal(t, 400, r.Status, "%s: %s", tc.field, r.Raw)
		require.Equal(t, tc.field, errField(r), string(r.Raw))
		require.Contains(t, string(r.Raw), tc.message)
	}
}
