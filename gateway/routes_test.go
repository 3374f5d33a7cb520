package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The checks a path implies are on the rows whose paths imply them.
func TestRouteTableChecks(t *testing.T) {
	t.Parallel()
	for _, rt := range routeTable {
		what := rt.method + " " + rt.path
		require.Equal(t, strings.HasPrefix(rt.path, "/api/v1/queues/:name"), rt.checks&queueNamed != 0, "a custom role is checked on the queue a path names: %s", what)
		require.Equal(t, rt.checks&scoped != 0, rt.checks&local != 0, "a local API serves the shard's endpoints, no more: %s", what)
		require.Equal(t, rt.path == "/api/v1/enqueue", rt.checks&enqueueOne != 0, what)
		require.Equal(t, rt.path == "/api/v1/enqueue/batch", rt.checks&enqueueBatch != 0, what)
		require.Equal(t, strings.HasPrefix(rt.path, "/api/v1/fetch"), rt.checks&(executionCap|longPollCap) == executionCap|longPollCap, what)
		if rt.checks&(createsJobs|scheduleQuota|scheduleForget|batchBody) != 0 {
			require.NotZero(t, rt.checks&scoped, "only the shard's endpoints create jobs or schedules: %s", what)
		}
	}
}
