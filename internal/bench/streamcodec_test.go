package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// The hand-written ack frame reads back, by the generated code, as the
// WorkRequest it stands for.
func TestAckFrameIsWorkRequest(t *testing.T) {
	var f ackFrame
	f.ack(1, "job-1", []byte("tok-1"))
	f.ack(300, "job-2", []byte("tok-2"))
	f.ack(1<<40, "job-3", nil)
	f.credit(3)
	b, err := streamCodec{}.Marshal(&f)
	require.NoError(t, err)
	var got jobbiev1.WorkRequest
	require.NoError(t, proto.Unmarshal(b, &got))
	want := &jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: 3}, Acks: []*jobbiev1.Ack{
		{CorrelationId: 1, JobId: "job-1", LeaseToken: "tok-1"},
		{CorrelationId: 300, JobId: "job-2", LeaseToken: "tok-2"},
		{CorrelationId: 1 << 40, JobId: "job-3"},
	}}
	require.True(t, proto.Equal(want, &got), "got %v", &got)

	f.reset()
	f.ack(7, "job-7", []byte("tok-7"))
	b, err = streamCodec{}.MarshalAppend([]byte("prefix"), &f)
	require.NoError(t, err)
	require.Equal(t, "prefix", string(b[:6]))
	got.Reset()
	require.NoError(t, proto.Unmarshal(b[6:], &got))
	require.True(t, proto.Equal(&jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{{CorrelationId: 7, JobId: "job-7", LeaseToken: "tok-7"}}}, &got), "got %v", &got)
}

// Any other message (the hello) is written by proto; the hello asks for
// JSON payloads, as the SDK's worker does.
func TestStreamCodecHello(t *testing.T) {
	hello := streamHello("w", "q", 100)
	require.True(t, hello.GetHello().GetJsonPayloads())
	b, err := streamCodec{}.Marshal(hello)
	require.NoError(t, err)
	want, err := proto.Marshal(hello)
	require.NoError(t, err)
	require.Equal(t, want, b)
	_, err = streamCodec{}.Marshal("not a message")
	require.Error(t, err)
	require.Error(t, streamCodec{}.Unmarshal(b, &jobbiev1.WorkResponse{}))
}

// A frame the server sends, with every field set, reads as its jobs' ids
// and tokens and its results' correlation ids and error codes; the rest
// is skipped, and a frame read later does not change what an earlier
// one's ids say.
func TestJobFrameDecode(t *testing.T) {
	payload, err := structpb.NewValue(map[string]any{"n": 1.5, "s": "x", "l": []any{true, nil}})
	require.NoError(t, err)
	res := &jobbiev1.WorkResponse{
		Jobs: []*jobbiev1.LeasedJob{
			{JobId: "job-1", Queue: "q", Payload: payload, Attempt: 2, MaxRetries: 3, LeaseDuration: 30, Checkpoint: payload,
				Tags: map[string]string{"a": "b"}, LeaseToken: "tok-1", Traceparent: "00-aa-bb-01", Tracestate: "k=v"},
			{JobId: "job-2", LeaseToken: "tok-2", PayloadJson: []byte(`{"n":1}`), CheckpointJson: []byte(`[2]`)},
		},
		Results: []*jobbiev1.Result{
			{CorrelationId: 5, Status: "completed", Enqueued: []*jobbiev1.EnqueueResponse{{JobId: "child"}}},
			{CorrelationId: 1 << 33, ErrorCode: "lease_mismatch", ErrorMessage: "stale"},
		},
		Cancels:   []*jobbiev1.Cancel{{JobId: "job-9", LeaseToken: "tok-9"}},
		Drain:     &jobbiev1.Drain{Deadline: "30s", Worker: true},
		KeepAlive: &jobbiev1.KeepAlive{},
	}
	b, err := proto.Marshal(res)
	require.NoError(t, err)
	var f jobFrame
	require.NoError(t, streamCodec{}.Unmarshal(b, &f))
	require.Len(t, f.jobs, 2)
	require.Equal(t, "job-1", f.jobs[0].id)
	require.Equal(t, "tok-1", string(f.jobs[0].token))
	require.Equal(t, "job-2", f.jobs[1].id)
	require.Equal(t, "tok-2", string(f.jobs[1].token))
	require.Equal(t, []frameResult{{corrID: 5}, {corrID: 1 << 33, errCode: "lease_mismatch"}}, f.results)
	first := f.jobs[0].id

	b2, err := proto.Marshal(&jobbiev1.WorkResponse{Jobs: []*jobbiev1.LeasedJob{{JobId: "job-3", LeaseToken: "tok-3"}}})
	require.NoError(t, err)
	require.NoError(t, f.decode(b2))
	require.Len(t, f.jobs, 1)
	require.Empty(t, f.results)
	require.Equal(t, "job-3", f.jobs[0].id)
	require.Equal(t, "tok-3", string(f.jobs[0].token))
	require.Equal(t, "job-1", first)

	f.reset()
	require.Empty(t, f.jobs, "an empty frame (not passed to the codec) reads as nothing")
	require.Error(t, f.decode(b[:len(b)-3]), "a cut frame is an error")
}
