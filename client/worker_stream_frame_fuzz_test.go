package client

import (
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// fuzzFrames are the seeds: whole frames and odd ones.
func fuzzFrames(f *testing.F) {
	v := func(x any) *structpb.Value {
		val, err := structpb.NewValue(x)
		if err != nil {
			f.Fatal(err)
		}
		return val
	}
	for _, res := range []*jobbiev1.WorkResponse{
		{Jobs: []*jobbiev1.LeasedJob{
			{JobId: "job-1", Queue: "emails", Payload: v(map[string]any{"z": 1.0, "a": []any{"x", true, nil, 2.5}, "m": map[string]any{}}),
				Attempt: 2, MaxRetries: -1, LeaseDuration: 30.25, Checkpoint: v(map[string]any{"step": 3.0}),
				Tags: map[string]string{"team": "a", "": "empty"}, LeaseToken: "tok-1", Traceparent: "00-aa-bb-01", Tracestate: "k=v"},
			{JobId: "job-2", LeaseToken: "tok-2"},
			{JobId: "job-3", Payload: v("text \"\x01é😀"), Checkpoint: structpb.NewNullValue()},
			{JobId: "job-4", Payload: &structpb.Value{}},
			{JobId: "job-5", Payload: structpb.NewNumberValue(math.NaN()), Checkpoint: v([]any{1e21, 1e-7, -0.0})},
			{JobId: "job-6", PayloadJson: []byte(`{"z":1e999}`), CheckpointJson: []byte(`null`)},
			{JobId: "job-7", Payload: v("value"), PayloadJson: []byte(`[1]`), Checkpoint: v(1.0), CheckpointJson: []byte(`{"s":2}`)},
		}},
		{Results: []*jobbiev1.Result{{CorrelationId: 5, Status: "completed"}}, Cancels: []*jobbiev1.Cancel{{JobId: "job-9", LeaseToken: "tok-9"}},
			Drain: &jobbiev1.Drain{Deadline: "30s", Worker: true}, KeepAlive: &jobbiev1.KeepAlive{}},
	} {
		b, err := proto.Marshal(res)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// The values TestValueJSONAsProtojson prints, each a job's payload.
	nested := any("leaf")
	for range 20 {
		nested = map[string]any{"n": nested, "l": []any{1.0, "x"}}
	}
	for _, x := range []any{
		nil, true, 0.0, math.Copysign(0, -1), 123456789.0, 1e20, 1e21, 1.5e300, 1e-6, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64,
		"", "quote \" backslash \\ slash /", "\x00\x01\x1f\x7f \b\f\n\r\t", "<html>&amp;", "\u2028\u2029", "\ufffd",
		[]any{[]any{}, map[string]any{"": nil}}, map[string]any{"b": 1.0, "a": 2.0, "B": 3.0, "aa": 4.0, "é": 5.0, "": 6.0, "a\"b": 7.0}, nested,
	} {
		b, err := proto.Marshal(&jobbiev1.WorkResponse{Jobs: []*jobbiev1.LeasedJob{{JobId: "j", Payload: v(x)}}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// A job whose payload and tags come in parts; a group; a bad tag.
	job := protowire.AppendTag(nil, fieldJobPayload, protowire.BytesType)
	job = protowire.AppendBytes(job, []byte{0x2a, 0x00})
	job = protowire.AppendTag(job, fieldJobPayload, protowire.BytesType)
	job = protowire.AppendBytes(job, []byte{0x2a, 0x04, 0x0a, 0x02, 0x0a, 0x00})
	job = protowire.AppendTag(job, fieldJobTags, protowire.BytesType)
	job = protowire.AppendBytes(job, []byte{0x0a, 0x01, 'k', 0x12, 0x01, 'a', 0x12, 0x01, 'b'})
	job = protowire.AppendTag(job, 20, protowire.StartGroupType)
	job = protowire.AppendTag(job, 20, protowire.EndGroupType)
	frame := protowire.AppendTag(nil, fieldResJobs, protowire.BytesType)
	f.Add(protowire.AppendBytes(frame, job))
	f.Add([]byte{0x0a, 0x02, 0x1a, 0x80})
	f.Add([]byte{0x0c})
}

// A frame reads as the generated code and protojson read it: a frame
// the generated code reads gives the same jobs and the same rest; one it
// refuses is refused.
func FuzzStreamFrame(f *testing.F) {
	fuzzFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var want jobbiev1.WorkResponse
		wantErr := proto.Unmarshal(b, &want)
		var got streamFrame
		err := streamCodec{}.Unmarshal(b, &got)
		if wantErr != nil {
			if err == nil {
				t.Fatalf("the generated code refuses the frame (%v), the stream read it: %+v", wantErr, got.jobs)
			}
			return
		}
		if err != nil {
			t.Fatalf("the generated code reads the frame, the stream refused it: %v", err)
		}
		if len(got.jobs) != len(want.Jobs) {
			t.Fatalf("%d jobs, want %d", len(got.jobs), len(want.Jobs))
		}
		for i, j := range want.Jobs {
			w := jobOfGenerated(j)
			g := got.jobs[i]
			if w.ID != g.ID || w.Queue != g.Queue || string(w.Payload) != string(g.Payload) || w.Attempt != g.Attempt ||
				w.MaxRetries != g.MaxRetries || w.LeaseDuration != g.LeaseDuration || string(w.Checkpoint) != string(g.Checkpoint) ||
				(w.Checkpoint == nil) != (g.Checkpoint == nil) || w.LeaseToken != g.LeaseToken || w.TraceParent != g.TraceParent ||
				w.TraceState != g.TraceState || !sameTags(w.Tags, g.Tags) {
				t.Fatalf("job %d:\n got %+v\nwant %+v", i, g, w)
			}
		}
		want.Jobs = nil
		if !proto.Equal(&want, &got.res) {
			t.Fatalf("the rest:\n got %v\nwant %v", &got.res, &want)
		}
	})
}

func sameTags(a, b map[string]string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
