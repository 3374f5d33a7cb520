package shard

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// ackUsage runs one job of queue through enqueue, fetch and an ack that
// reports cost.
func (b *bundle) ackUsage(queue, cost string, tokens int) {
	b.t.Helper()
	id := b.enqueue(map[string]any{"queue": queue})
	f := b.fetch([]string{queue}, nil)
	require.Equal(b.t, id, f.Body["job_id"], string(f.Raw))
	a := b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1",
		"usage": map[string]any{"input_tokens": tokens, "cost_usd": cost, "model": "m"}})
	require.Equal(b.t, 200, a.Status, string(a.Raw))
}

// aiUsage reads GET /api/v1/ai/usage with q over usageHour's three hours.
func (b *bundle) aiUsage(q url.Values) (wire.AIUsageResponse, resp) {
	b.t.Helper()
	q.Set("from", usageHour.Format(time.RFC3339))
	q.Set("to", usageHour.Add(3*time.Hour).Format(time.RFC3339))
	r := b.call("GET", "/api/v1/ai/usage?"+q.Encode(), nil)
	var u wire.AIUsageResponse
	if r.Status == 200 {
		require.NoError(b.t, json.Unmarshal(r.Raw, &u))
	}
	return u, r
}

func aiGroup(key string, reports, input int64, cost string) wire.AIUsageGroup {
	return wire.AIUsageGroup{Key: key, Reports: reports, InputTokens: input, CostUSD: cost}
}

// Usage reported through acks over three hours reads back per step in
// one answer: a bucket per step from from (the last cut at to, an empty
// one with no groups), each with the same exact sums as the totals, and
// a key limited to some queues sees their buckets alone.
func TestAIUsageBySteps(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(usageHour.Add(time.Minute))
	b := setup(t, withClock(clock))
	b.ackUsage("a", "0.1", 10)
	b.ackUsage("b", "0.2", 20)
	clock.Advance(2 * time.Hour) // nothing in the second hour
	b.ackUsage("a", "0.000000001", 1)
	b.ackUsage("a", "0.2", 2)

	u, r := b.aiUsage(url.Values{"group_by": {"queue"}, "step": {"1h"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "1h", u.Step)
	totals := []wire.AIUsageGroup{aiGroup("a", 3, 13, "0.300000001"), aiGroup("b", 1, 20, "0.2")}
	require.Equal(t, totals, u.Groups)
	require.Equal(t, []wire.AIUsageBucket{
		{Start: usageHour, Groups: []wire.AIUsageGroup{aiGroup("a", 1, 10, "0.1"), aiGroup("b", 1, 20, "0.2")}},
		{Start: usageHour.Add(time.Hour), Groups: []wire.AIUsageGroup{}},
		{Start: usageHour.Add(2 * time.Hour), Groups: []wire.AIUsageGroup{aiGroup("a", 2, 3, "0.200000001")}},
	}, u.Buckets)
	require.Contains(t, string(r.Raw), `"groups":[]`, "an empty step's groups are an empty list")

	u, r = b.aiUsage(url.Values{"group_by": {"model"}, "step": {"2h"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []wire.AIUsageBucket{
		{Start: usageHour, Groups: []wire.AIUsageGroup{aiGroup("m", 2, 30, "0.3")}},
		{Start: usageHour.Add(2 * time.Hour), Groups: []wire.AIUsageGroup{aiGroup("m", 2, 3, "0.200000001")}},
	}, u.Buckets, "the last step is cut at to")

	u, r = b.aiUsage(url.Values{"step": {"24h"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "1d", u.Step)
	require.Equal(t, []wire.AIUsageBucket{{Start: usageHour, Groups: u.Groups}}, u.Buckets)
	require.Equal(t, []wire.AIUsageGroup{aiGroup("default", 4, 33, "0.500000001")}, u.Groups)

	// A key limited to queue b: its queue's buckets alone.
	scoped := b.withScope("b")
	u, r = scoped.aiUsage(url.Values{"group_by": {"queue"}, "step": {"1h"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []wire.AIUsageGroup{aiGroup("b", 1, 20, "0.2")}, u.Groups)
	require.Equal(t, []wire.AIUsageBucket{
		{Start: usageHour, Groups: []wire.AIUsageGroup{aiGroup("b", 1, 20, "0.2")}},
		{Start: usageHour.Add(time.Hour), Groups: []wire.AIUsageGroup{}},
		{Start: usageHour.Add(2 * time.Hour), Groups: []wire.AIUsageGroup{}},
	}, u.Buckets)
	_, r = scoped.aiUsage(url.Values{"group_by": {"model"}, "step": {"1h"}})
	require.Equal(t, 403, r.Status, string(r.Raw))
}

// Without step the answer is what it was before steps: no step, no
// buckets, the same bytes.
func TestAIUsageWithoutStepUnchanged(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(usageHour.Add(time.Minute))
	b := setup(t, withClock(clock))
	b.ackUsage("a", "0.1", 10)
	_, r := b.aiUsage(url.Values{"group_by": {"queue"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, `{"from":"2026-11-24T13:00:00Z","to":"2026-11-24T16:00:00Z","group_by":"queue","groups":[`+
		`{"key":"a","reports":1,"input_tokens":10,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":"0.1"}]}`,
		string(r.Raw))
}

// A step that is not whole hours or days, or out of bounds, is a 400
// naming step.
func TestAIUsageBadStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, step := range []string{"90m", "0h", "1.5h", "1w", "32d", "745h", "-1h", "1", "d", "01d"} {
		_, r := b.aiUsage(url.Values{"step": {step}})
		require.Equal(t, 400, r.Status, "%s: %s", step, r.Raw)
		require.Equal(t, "bad_request", errCode(r), step)
		require.Equal(t, "step", errField(r), step)
	}
}
