package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

func (f *fsmBundle) aiUsage(dim byte, from, to time.Time) map[string]*AIBucket {
	f.t.Helper()
	out, err := ReadAIUsage(f.db, testNS, dim, from.UnixNano(), to.UnixNano())
	require.NoError(f.t, err)
	return out
}

func TestAIUsageAddsUpOverHeartbeatsAndAttempts(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	hour := f.now
	id := f.enqueue(&job.Job{Queue: "llm", MaxRetries: 3, Tags: map[string]string{"team": "search"}})
	require.Equal(t, id, f.fetch("llm").ID)
	u := &AIUsage{Input: 100, Output: 10, CacheRead: 5, CacheWrite: 1, CostNanos: 1_500_000, Model: "m1", Provider: "p1"}
	for range 3 {
		require.Equal(t, []string{wire.HeartbeatOK}, f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Usage: u}}}))
	}
	// A failed attempt reports too; the next attempt's ack, without a
	// model, counts under the job's last.
	require.NotNil(t, f.apply(FailUsage.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "boom", Usage: u}))
	f.advance(time.Hour) // the next hour; the job retries after its backoff
	f.apply(Promote.Type, &SweepCmd{NS: testNS, IDs: []string{id}})
	require.Equal(t, id, f.fetch("llm").ID)
	require.Equal(t, job.Completed, f.apply(AckUsage.Type, &AckCmd{NS: testNS, ID: id, WorkerID: "w", Usage: &AIUsage{Output: 7, CostNanos: 3}}))

	rec, err := ReadJobAI(f.db, testNS, id)
	require.NoError(t, err)
	require.Equal(t, &JobAI{Reports: 5, Usage: AIUsage{Input: 400, Output: 47, CacheRead: 20, CacheWrite: 4, CostNanos: 6_000_003, Model: "m1", Provider: "p1"}}, rec)
	require.Equal(t, "0.006000003", wire.FormatCostUSD(rec.Usage.CostNanos))

	all := AIUsage{Input: 400, Output: 47, CacheRead: 20, CacheWrite: 4, CostNanos: 6_000_003}
	end := f.now.Add(time.Hour)
	for _, dim := range []struct {
		dim   byte
		value string
	}{{keys.AIDimNamespace, ""}, {keys.AIDimQueue, "llm"}, {keys.AIDimModel, "m1"}, {keys.AIDimTag, "team=search"}} {
		got := f.aiUsage(dim.dim, hour, end)
		require.Equal(t, map[string]*AIBucket{dim.value: {Reports: 5, Usage: all}}, got, "dimension %c", dim.dim)
	}
	// By hour: four reports in the first, one in the second.
	require.EqualValues(t, 4, f.aiUsage(keys.AIDimQueue, hour, hour.Add(time.Hour))["llm"].Reports)
	require.EqualValues(t, 1, f.aiUsage(keys.AIDimQueue, hour.Add(time.Hour), end)["llm"].Reports)
	// By step, in one scan: the totals, and each hour's sums.
	total, steps, err := ReadAIUsageSteps(f.db, testNS, keys.AIDimQueue, hour.UnixNano(), end.UnixNano(), int64(time.Hour))
	require.NoError(t, err)
	require.Equal(t, f.aiUsage(keys.AIDimQueue, hour, end), total)
	require.Len(t, steps, 2)
	require.Equal(t, f.aiUsage(keys.AIDimQueue, hour, hour.Add(time.Hour)), steps[0])
	require.Equal(t, f.aiUsage(keys.AIDimQueue, hour.Add(time.Hour), end), steps[1])
	_, steps, err = ReadAIUsageSteps(f.db, testNS, keys.AIDimQueue, hour.UnixNano(), end.UnixNano(), int64(3*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []map[string]*AIBucket{total}, steps, "one step longer than the range")

	// The job's record goes with the job.
	f.apply(JobDiscard.Type, &JobOpCmd{NS: testNS, ID: id})
	require.False(t, f.has(keys.JobAI(testNS, id)))
}

func TestAIUsageRefusedCallAddsNothing(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "llm"})
	u := &AIUsage{Input: 1, CostNanos: 1}
	// Not active: the ack is refused and nothing is counted.
	require.Error(t, f.apply(AckUsage.Type, &AckCmd{NS: testNS, ID: id, WorkerID: "w", Usage: u}).(error))
	require.Equal(t, []string{wire.HeartbeatLost}, f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Usage: u}}}))
	require.False(t, f.has(keys.JobAI(testNS, id)))
	require.Empty(t, f.aiUsage(keys.AIDimNamespace, f.now.Add(-time.Hour), f.now.Add(time.Hour)))
}

func TestAIUsageSeriesAreBounded(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	var ids []string
	for range 3 {
		ids = append(ids, f.enqueue(&job.Job{Queue: "llm"}))
		f.fetch("llm")
	}
	// Past the bound of models in an hour, new ones count as "(other)".
	for i := range wire.MaxAIUsageSeries + 2 {
		got := f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: ids[i%3], Usage: &AIUsage{Input: 1, Model: fmt.Sprint("m", i)}}}})
		require.Equal(t, []string{wire.HeartbeatOK}, got)
	}
	models := f.aiUsage(keys.AIDimModel, f.now, f.now.Add(time.Hour))
	require.Len(t, models, wire.MaxAIUsageSeries+1)
	require.EqualValues(t, 2, models[wire.AIUsageOther].Reports)
	require.EqualValues(t, 1, models["m0"].Reports)
}

func TestAIUsageTrimmedPastRetention(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	first := f.now
	id := f.enqueue(&job.Job{Queue: "llm", LeaseNs: int64(100 * 24 * time.Hour)})
	f.fetch("llm")
	beat := func() {
		require.Equal(t, []string{wire.HeartbeatOK}, f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Usage: &AIUsage{Input: 1}}}}))
	}
	beat()
	f.advance(wire.AIUsageRetention - time.Hour)
	beat()
	require.Len(t, f.aiUsage(keys.AIDimNamespace, first, first.Add(time.Hour)), 1, "kept while within the retention")
	f.advance(2 * time.Hour)
	beat()
	require.Empty(t, f.aiUsage(keys.AIDimNamespace, first, first.Add(time.Hour)), "the first hour is past the retention")
	require.EqualValues(t, 2, f.aiUsage(keys.AIDimNamespace, first, f.now.Add(time.Hour))[""].Reports)
}

func TestAIUsageIsMetered(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := meterFSM(t)
	id := f.enqueue(&job.Job{Queue: "llm"})
	f.fetch("llm")
	u := &AIUsage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, CostNanos: 123_456_789}
	f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Usage: u}}})
	require.Equal(t, job.Completed, f.apply(AckUsage.Type, &AckCmd{NS: testNS, ID: id, Usage: u}))
	m := f.meters(testNS, f.now)
	require.Equal(t, []int64{20, 40, 60, 80, 246_913_578},
		[]int64{m.AIInputTokens, m.AIOutputTokens, m.AICacheReadTokens, m.AICacheWriteTokens, m.AICostNanos})
	// A bucket without AI usage keeps the bytes it had before these meters.
	var plain [nMeters]int64
	plain[mEnqueued] = 1
	require.Len(t, encodeMeters(nil, &plain), mFirstMeters)
}
