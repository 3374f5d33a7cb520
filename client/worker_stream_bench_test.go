package client

import (
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// benchJobFrame is a WorkResponse of n jobs as the gateway sends them,
// each with a small object payload: as JSON (what the worker asks for),
// or as a Value (what a server that does not know json_payloads sends).
func benchJobFrame(b *testing.B, n int, asJSON bool) []byte {
	b.Helper()
	res := &jobbiev1.WorkResponse{}
	for i := range n {
		x := map[string]any{"user_id": float64(1000 + i), "email": "someone@example.com",
			"plan": "pro", "tags": []any{"a", "b"}, "retry": true, "amount": 12.5}
		j := &jobbiev1.LeasedJob{JobId: fmt.Sprintf("01JF%022d", i), Queue: "emails",
			Attempt: 1, MaxRetries: 3, LeaseDuration: 30, LeaseToken: fmt.Sprintf("tok-%d", i)}
		var err error
		if asJSON {
			j.PayloadJson, err = json.Marshal(x)
		} else {
			j.Payload, err = structpb.NewValue(x)
		}
		if err != nil {
			b.Fatal(err)
		}
		res.Jobs = append(res.Jobs, j)
	}
	f, err := proto.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkStreamJobFrame is what the stream worker does with a frame
// of 100 jobs before its handlers run: decode it and make each a Job.
func BenchmarkStreamJobFrame(b *testing.B) { benchStreamJobFrame(b, true) }

// BenchmarkStreamJobFrameValues is the same with the payloads as Values.
func BenchmarkStreamJobFrameValues(b *testing.B) { benchStreamJobFrame(b, false) }

func benchStreamJobFrame(b *testing.B, asJSON bool) {
	f := benchJobFrame(b, 100, asJSON)
	b.ReportAllocs()
	for b.Loop() {
		var res streamFrame
		if err := (streamCodec{}).Unmarshal(f, &res); err != nil {
			b.Fatal(err)
		}
		if len(res.jobs) != 100 {
			b.Fatal(len(res.jobs))
		}
	}
}

// BenchmarkStreamJobFrameGenerated is the same by the generated code and
// protojson, as the worker did before (jobOfGenerated).
func BenchmarkStreamJobFrameGenerated(b *testing.B) {
	f := benchJobFrame(b, 100, false)
	b.ReportAllocs()
	for b.Loop() {
		var res jobbiev1.WorkResponse
		if err := proto.Unmarshal(f, &res); err != nil {
			b.Fatal(err)
		}
		for _, j := range res.GetJobs() {
			_ = jobOfGenerated(j)
		}
	}
}
