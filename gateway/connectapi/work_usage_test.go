package connectapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

func usageValue(t *testing.T, m map[string]any) *structpb.Value {
	t.Helper()
	v, err := structpb.NewValue(m)
	require.NoError(t, err)
	return v
}

// Frames' usage goes into the HTTP calls as their usage objects; a frame
// whose usage is bad is refused alone, naming it, and the others of the
// call go on; two heartbeats of one job add up.
func TestWorkStreamCarriesUsage(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(2)
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	bidi.RequestHeader().Set("Authorization", "Bearer k")
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 2}}))
	jobs := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()
	for len(jobs) < 2 {
		jobs = append(jobs, recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()...)
	}
	a, b := jobs[0], jobs[1]

	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Heartbeats: []*jobbiev1.Heartbeat{
		{CorrelationId: 1, JobId: a.GetJobId(), LeaseToken: a.GetLeaseToken(), Usage: usageValue(t, map[string]any{"input_tokens": 10, "cost_usd": "0.1"})},
		{CorrelationId: 2, JobId: a.GetJobId(), LeaseToken: a.GetLeaseToken(), Usage: usageValue(t, map[string]any{"input_tokens": 5, "cost_usd": "0.2", "model": "m"})},
		{CorrelationId: 3, JobId: b.GetJobId(), LeaseToken: b.GetLeaseToken(), Usage: usageValue(t, map[string]any{"cost_usd": "lots"})},
	}}))
	results := map[uint64]*jobbiev1.Result{}
	for len(results) < 3 {
		for _, r := range recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetResults()) > 0 }).GetResults() {
			results[r.GetCorrelationId()] = r
		}
	}
	require.Equal(t, wire.HeartbeatOK, results[1].GetStatus())
	require.Equal(t, wire.HeartbeatOK, results[2].GetStatus())
	require.Equal(t, string(wire.CodeBadRequest), results[3].GetErrorCode())
	require.True(t, strings.HasPrefix(results[3].GetErrorMessage(), "heartbeats.usage: "), results[3].GetErrorMessage())
	var hb wire.HeartbeatRequest
	require.NoError(t, json.Unmarshal(f.requests("/api/v1/heartbeat")[0], &hb))
	require.Equal(t, &wire.AIUsage{InputTokens: 15, CostUSD: "0.3", Model: "m"}, hb.Jobs[a.GetJobId()].Usage, "exact: 0.1 + 0.2")
	_, sent := hb.Jobs[b.GetJobId()]
	require.False(t, sent, "the refused frame's job is not in the call")

	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{
		{CorrelationId: 4, JobId: a.GetJobId(), LeaseToken: a.GetLeaseToken(), Usage: usageValue(t, map[string]any{"output_tokens": 7})},
		{CorrelationId: 5, JobId: b.GetJobId(), LeaseToken: b.GetLeaseToken(), Usage: usageValue(t, map[string]any{"tokens": 7})},
	}}))
	clear(results)
	for len(results) < 2 {
		for _, r := range recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetResults()) > 0 }).GetResults() {
			results[r.GetCorrelationId()] = r
		}
	}
	require.Equal(t, wire.StateCompleted, results[4].GetStatus())
	require.Equal(t, string(wire.CodeBadRequest), results[5].GetErrorCode(), "an unknown usage field")
	var ab wire.AckBatchRequest
	require.NoError(t, json.Unmarshal(f.requests("/api/v1/ack/batch")[0], &ab))
	require.Len(t, ab.Acks, 1)
	require.Equal(t, &wire.AIUsage{OutputTokens: 7}, ab.Acks[0].Usage)
	require.NoError(t, bidi.CloseRequest())
}
