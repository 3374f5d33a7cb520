package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// Tags starting with "jobbie." are the server's (a schedule's id and run
// on the jobs it fires): an enqueue, a job of a batch or a chain step
// that sets one is a 400 naming its tags field, and nothing is stored. A
// search may still name them.
func TestReservedTagsAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forged := map[string]any{wire.TagScheduleID: "sch_forged"}
	cases := []struct {
		path, field string
		body        map[string]any
	}{
		{"/api/v1/enqueue", "tags", map[string]any{"queue": "rt", "tags": forged}},
		{"/api/v1/enqueue", "tags", map[string]any{"queue": "rt", "tags": map[string]any{"jobbie.anything": "x"}}},
		{"/api/v1/enqueue/batch", "jobs[1].tags", map[string]any{"jobs": []any{
			map[string]any{"queue": "rt"}, map[string]any{"queue": "rt", "tags": forged}}}},
		{"/api/v1/enqueue", "chain.steps[1].tags", map[string]any{"queue": "rt", "chain": map[string]any{"steps": []any{
			map[string]any{"queue": "rt"}, map[string]any{"queue": "rt", "tags": forged}}}}},
	}
	for _, c := range cases {
		r := b.call("POST", c.path, c.body)
		require.Equal(t, 400, r.Status, "%s %v: %s", c.path, c.body, r.Raw)
		require.Equal(t, c.field, errField(r), "%s", r.Raw)
		require.Contains(t, string(r.Raw), "reserved")
	}
	r := b.call("GET", "/api/v1/queues/rt", nil)
	if r.Status == 200 {
		require.EqualValues(t, 0, r.Body["counts"].(map[string]any)["pending"], "a refused enqueue stored a job")
	}
	// A producer's own tags still pass, and the reserved ones can be searched.
	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "rt", "tags": map[string]any{"jobbiex": "1", "team": "a"}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/jobs/search", map[string]any{"tags": forged})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Body["jobs"])
}
