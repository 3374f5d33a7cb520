package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
)

// A command goes under its newer number exactly when it carries what an
// older node would drop: a lease, a named fetch, a schedule's queue
// defaults, a schedule name's per-queue rule. Without it, the number
// older nodes know.
func TestCommandsTakeANewNumberOnlyWithTheirNewFields(t *testing.T) {
	t.Parallel()
	l := job.LeaseID{Attempt: 1, At: 5}
	require.Equal(t, Fetch.Type, FetchFor(&FetchCmd{}).Type)
	require.Equal(t, FetchNamed.Type, FetchFor(&FetchCmd{Named: true}).Type)
	require.Equal(t, FetchBatch.Type, FetchBatchFor(&FetchBatchCmd{}).Type)
	require.Equal(t, FetchBatchNamed.Type, FetchBatchFor(&FetchBatchCmd{Fetch: FetchCmd{Named: true}}).Type)
	require.Equal(t, Ack.Type, AckFor(&AckCmd{}).Type)
	require.Equal(t, AckLease.Type, AckFor(&AckCmd{Lease: l}).Type)
	require.Equal(t, Fail.Type, FailFor(&FailCmd{}).Type)
	require.Equal(t, FailLease.Type, FailFor(&FailCmd{Lease: l}).Type)
	require.Equal(t, Heartbeat.Type, HeartbeatFor(&HeartbeatCmd{Jobs: []HeartbeatItem{{ID: "a"}}}).Type)
	require.Equal(t, HeartbeatLease.Type, HeartbeatFor(&HeartbeatCmd{Jobs: []HeartbeatItem{{ID: "a"}, {ID: "b", Lease: l}}}).Type)
	require.Equal(t, AckBatch.Type, AckBatchFor(&AckBatchCmd{Items: []AckBatchItem{{ID: "a"}}}).Type)
	require.Equal(t, AckBatchLease.Type, AckBatchFor(&AckBatchCmd{Items: []AckBatchItem{{ID: "a"}, {ID: "b", Lease: l}}}).Type)
	require.Equal(t, Release.Type, ReleaseFor(&ReleaseCmd{Jobs: []ReleaseItem{{ID: "a", Attempt: 1}}}).Type)
	require.Equal(t, ReleaseLease.Type, ReleaseFor(&ReleaseCmd{Jobs: []ReleaseItem{{ID: "a", Attempt: 1, Lease: l}}}).Type)
	require.Equal(t, ScheduleCreate.Type, ScheduleCreateFor(&ScheduleCmd{}).Type)
	require.Equal(t, ScheduleCreateDefaults.Type, ScheduleCreateFor(&ScheduleCmd{Sched: Schedule{DefaultRetries: true}}).Type)
	require.Equal(t, ScheduleUpdate.Type, ScheduleUpdateFor(&ScheduleCmd{}).Type)
	require.Equal(t, ScheduleUpdateDefaults.Type, ScheduleUpdateFor(&ScheduleCmd{Sched: Schedule{DefaultRetries: true}}).Type)
	for _, d := range []bool{false, true} {
		require.Equal(t, ScheduleCreateQueueNames.Type, ScheduleCreateFor(&ScheduleCmd{QueueNames: true, Sched: Schedule{DefaultRetries: d}}).Type)
		require.Equal(t, ScheduleUpdateQueueNames.Type, ScheduleUpdateFor(&ScheduleCmd{QueueNames: true, Sched: Schedule{DefaultRetries: d}}).Type)
	}
	require.Equal(t, ScheduleFire.Type, ScheduleFireFor(&FireCmd{}).Type)
	require.Equal(t, ScheduleFireDefaults.Type, ScheduleFireFor(&FireCmd{QueueDefaults: true}).Type)
}
