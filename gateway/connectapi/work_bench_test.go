package connectapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkStreamAcks is the gateway's side of one frame of 100 acks:
// the ack/batch request built, the route's answer read, each ack's
// result made (docs/BENCHMARKS.md, "The fast path, 2026-11-29 (later)").
// The route answers at once, so only the stream's own work is measured.
func BenchmarkStreamAcks(b *testing.B) {
	acks := make([]*jobbiev1.Ack, 100)
	res := wire.AckBatchResponse{Results: make([]wire.AckBatchResult, len(acks))}
	for i := range acks {
		id := fmt.Sprintf("job_%026d", i)
		acks[i] = &jobbiev1.Ack{CorrelationId: uint64(i + 1), JobId: id, LeaseToken: "lt_0123456789abcdef"}
		res.Results[i] = wire.AckBatchResult{JobID: id, Status: wire.StateCompleted}
	}
	body, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	route := func(*Request) Answer { return Answer{Status: http.StatusOK, Body: body} }
	st := &stream{s: New(route, WorkConfig{}, ScalerConfig{}), hello: &jobbiev1.Hello{WorkerId: "w1"}, held: map[string]wire.ReleaseEntry{}}
	b.ReportAllocs()
	for b.Loop() {
		out := &jobbiev1.WorkResponse{}
		st.acks(acks, out)
		if len(out.Results) != len(acks) || out.Results[0].GetStatus() != wire.StateCompleted {
			b.Fatalf("results: %v", out.Results[:1])
		}
	}
}
