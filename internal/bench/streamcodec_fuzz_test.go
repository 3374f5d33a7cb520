package bench

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// A frame the generated code reads reads here as the same ids, tokens,
// correlation ids and error codes, into a frame reused from an earlier
// one, whose ids stay what they were; any other frame is refused or read
// (the bench skips what it does not read: a payload is not checked),
// never a panic.
func FuzzJobFrame(f *testing.F) {
	payload, err := structpb.NewValue(map[string]any{"n": 1.5, "s": "x", "l": []any{true, nil}})
	if err != nil {
		f.Fatal(err)
	}
	for _, res := range []*jobbiev1.WorkResponse{
		{Jobs: []*jobbiev1.LeasedJob{
			{JobId: "job-1", Queue: "q", Payload: payload, Attempt: 2, MaxRetries: 3, LeaseDuration: 30, Checkpoint: payload,
				Tags: map[string]string{"a": "b"}, LeaseToken: "tok-1", Traceparent: "00-aa-bb-01", Tracestate: "k=v"},
			{JobId: "job-2", LeaseToken: "tok-2", PayloadJson: []byte(`{"n":1}`), CheckpointJson: []byte(`[2]`)},
		},
			Results: []*jobbiev1.Result{
				{CorrelationId: 5, Status: "completed", Enqueued: []*jobbiev1.EnqueueResponse{{JobId: "child"}}},
				{CorrelationId: 1 << 33, ErrorCode: "lease_mismatch", ErrorMessage: "stale"},
			},
			Cancels: []*jobbiev1.Cancel{{JobId: "job-9", LeaseToken: "tok-9"}}, Drain: &jobbiev1.Drain{Deadline: "30s", Worker: true},
			KeepAlive: &jobbiev1.KeepAlive{}},
		{Jobs: []*jobbiev1.LeasedJob{{JobId: "job-3", LeaseToken: "tok-3"}}},
	} {
		b, err := proto.Marshal(res)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x04, 0x0a, 0x01, 'a', 0x0a}) // an id cut
	f.Add([]byte{0x12, 0x02, 0x08, 0x80})            // a correlation id cut
	earlier, err := proto.Marshal(&jobbiev1.WorkResponse{Jobs: []*jobbiev1.LeasedJob{{JobId: "earlier", LeaseToken: "tok"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr jobFrame
		if err := fr.decode(earlier); err != nil {
			t.Fatal(err)
		}
		first := fr.jobs[0].id
		err := fr.decode(b)
		if first != "earlier" {
			t.Fatalf("an earlier frame's id is now %q", first)
		}
		var want jobbiev1.WorkResponse
		if proto.Unmarshal(b, &want) != nil {
			return
		}
		if err != nil {
			t.Fatalf("the generated code reads the frame, the bench refused it: %v", err)
		}
		if len(fr.jobs) != len(want.Jobs) || len(fr.results) != len(want.Results) {
			t.Fatalf("%d jobs and %d results, want %d and %d", len(fr.jobs), len(fr.results), len(want.Jobs), len(want.Results))
		}
		for i, j := range want.Jobs {
			if fr.jobs[i].id != j.GetJobId() || string(fr.jobs[i].token) != j.GetLeaseToken() {
				t.Fatalf("job %d: %q %q, want %q %q", i, fr.jobs[i].id, fr.jobs[i].token, j.GetJobId(), j.GetLeaseToken())
			}
		}
		for i, r := range want.Results {
			if fr.results[i] != (frameResult{corrID: r.GetCorrelationId(), errCode: r.GetErrorCode()}) {
				t.Fatalf("result %d: %+v, want %v", i, fr.results[i], r)
			}
		}
	})
}
