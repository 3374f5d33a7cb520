package client

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// jobOfGenerated is a LeasedJob as a handler saw it when frames were read
// by the generated code: the reference the hand-written reading is held
// to.
func jobOfGenerated(j *jobbiev1.LeasedJob) *Job {
	job := &Job{ID: j.GetJobId(), Queue: j.GetQueue(), Payload: rawOfGenerated(j.GetPayload()), Attempt: int(j.GetAttempt()),
		MaxRetries: int(j.GetMaxRetries()), LeaseDuration: secondsOf(j.GetLeaseDuration()),
		Tags: j.GetTags(), LeaseToken: j.GetLeaseToken(), TraceParent: j.GetTraceparent(), TraceState: j.GetTracestate()}
	if _, isNull := j.GetCheckpoint().GetKind().(*structpb.Value_NullValue); j.GetCheckpoint() != nil && !isNull {
		job.Checkpoint = rawOfGenerated(j.GetCheckpoint())
	}
	// JSON, when sent, over the Values; a null checkpoint is none.
	if p := j.GetPayloadJson(); len(p) > 0 {
		job.Payload = p
	}
	if c := j.GetCheckpointJson(); len(c) > 0 {
		job.Checkpoint = nil
		if string(c) != "null" {
			job.Checkpoint = c
		}
	}
	return job
}

func rawOfGenerated(v *structpb.Value) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	var c bytes.Buffer // protojson's spacing varies from build to build
	if err := json.Compact(&c, b); err != nil {
		panic(err)
	}
	return c.Bytes()
}

func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func value(t *testing.T, x any) *structpb.Value {
	t.Helper()
	v, err := structpb.NewValue(x)
	require.NoError(t, err)
	return v
}

// Every field of LeasedJob is one decodeJob reads: a field added to the
// proto fails here until the worker reads it too.
func TestDecodeJobReadsEveryField(t *testing.T) {
	read := map[protowire.Number]bool{fieldJobID: true, fieldJobQueue: true, fieldJobPayload: true, fieldJobAttempt: true,
		fieldJobMaxRetries: true, fieldJobLeaseDuration: true, fieldJobCheckpoint: true, fieldJobTags: true,
		fieldJobLeaseToken: true, fieldJobTraceparent: true, fieldJobTracestate: true, fieldJobPayloadJSON: true, fieldJobCheckpointJSON: true}
	fields := (&jobbiev1.LeasedJob{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		require.True(t, read[f.Number()], "LeasedJob.%s (%d) is not read by decodeJob", f.Name(), f.Number())
	}
	require.Len(t, read, fields.Len())
}

// A frame reads as the generated code and protojson read it: the jobs
// field by field (payloads as the same JSON), the rest as sent.
func TestStreamFrameAsGenerated(t *testing.T) {
	res := &jobbiev1.WorkResponse{
		Jobs: []*jobbiev1.LeasedJob{
			{JobId: "job-1", Queue: "emails", Payload: value(t, map[string]any{"z": 1.0, "a": []any{"x", true, nil, 2.5}, "m": map[string]any{}}),
				Attempt: 2, MaxRetries: -1, LeaseDuration: 30.25, Checkpoint: value(t, map[string]any{"step": 3.0}),
				Tags: map[string]string{"team": "a", "": "empty"}, LeaseToken: "tok-1", Traceparent: "00-aa-bb-01", Tracestate: "k=v"},
			{JobId: "job-2", LeaseToken: "tok-2"}, // no payload: null
			{JobId: "job-3", Payload: value(t, "text"), Checkpoint: structpb.NewNullValue()},
			{JobId: "job-4", Payload: &structpb.Value{}}, // no kind: null, as protojson refused it
			{JobId: "job-5", Payload: structpb.NewNumberValue(math.NaN())},
			// As the worker asks for them: JSON as stored, a null checkpoint none.
			{JobId: "job-6", PayloadJson: []byte(`{"z":1e999,"a":[1.50]}`), CheckpointJson: []byte(`{"step":3}`)},
			{JobId: "job-7", PayloadJson: []byte(`"x"`), CheckpointJson: []byte(`null`)},
			{JobId: "job-8", Payload: value(t, "value"), PayloadJson: []byte(`"json"`), Checkpoint: value(t, 1.0), CheckpointJson: []byte(`2`)},
		},
		Results:   []*jobbiev1.Result{{CorrelationId: 5, Status: "completed"}, {CorrelationId: 6, ErrorCode: "lease_mismatch", ErrorMessage: "x"}},
		Cancels:   []*jobbiev1.Cancel{{JobId: "job-9", LeaseToken: "tok-9"}},
		Drain:     &jobbiev1.Drain{Deadline: "30s", Worker: true},
		KeepAlive: &jobbiev1.KeepAlive{},
	}
	b, err := proto.Marshal(res)
	require.NoError(t, err)
	var f streamFrame
	require.NoError(t, streamCodec{}.Unmarshal(b, &f))
	require.Len(t, f.jobs, len(res.Jobs))
	for i, j := range res.Jobs {
		require.Equal(t, jobOfGenerated(j), f.jobs[i], "job %d", i)
	}
	rest := proto.Clone(res).(*jobbiev1.WorkResponse)
	rest.Jobs = nil
	require.True(t, proto.Equal(rest, &f.res), "got %v", &f.res)
	require.Equal(t, `{"z":1e999,"a":[1.50]}`, string(f.jobs[5].Payload))
	require.Nil(t, f.jobs[6].Checkpoint)
	require.Equal(t, `"json"`, string(f.jobs[7].Payload))

	// Nothing of connect's buffer, reused after the call, is kept.
	clear(b)
	require.Equal(t, `{"z":1e999,"a":[1.50]}`, string(f.jobs[5].Payload))
	require.Equal(t, `{"step":3}`, string(f.jobs[5].Checkpoint))

	require.Error(t, streamCodec{}.Unmarshal(b[:len(b)-3], &streamFrame{}), "a cut frame")
	require.Error(t, streamCodec{}.Unmarshal(b, &jobbiev1.WorkResponse{}))
}

// Values print as protojson prints them, but for its spacing.
func TestValueJSONAsProtojson(t *testing.T) {
	nested := any("leaf")
	for range 50 {
		nested = map[string]any{"n": nested, "l": []any{1.0, "x"}}
	}
	for _, x := range []any{
		nil, true, false, 0.0, math.Copysign(0, -1), 1.0, -1.5, 123456789.0, 1e20, 1e21, 1.5e300, 1e-6, 1e-7, -2.25e-10,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 9007199254740993.0, 0.1,
		"", "plain", "quote \" backslash \\ slash /", "\x00\x01\x1f\x7f \b\f\n\r\t", "<html>&amp;", "héllo 世界 😀", "\u2028\u2029", "\ufffd",
		[]any{}, map[string]any{}, []any{[]any{}, map[string]any{"": nil}},
		map[string]any{"b": 1.0, "a": 2.0, "B": 3.0, "aa": 4.0, "é": 5.0, "": 6.0, "a\"b": 7.0},
		map[string]any{"user": map[string]any{"id": 42.0, "tags": []any{"x", "y"}, "ok": true}, "n": nil},
		nested,
	} {
		v := value(t, x)
		b, err := proto.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(rawOfGenerated(v)), string(valueJSON(b)), "%#v", x)
	}
}

// What protojson refused reads as null; a key sent twice has its last
// value; a payload sent in two parts is merged, as proto merges it.
func TestValueJSONEdges(t *testing.T) {
	for name, v := range map[string]*structpb.Value{
		"NaN":        structpb.NewNumberValue(math.NaN()),
		"infinity":   structpb.NewNumberValue(math.Inf(-1)),
		"no kind":    {},
		"nested NaN": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(math.Inf(1))}}),
	} {
		b, err := proto.MarshalOptions{}.Marshal(v)
		require.NoError(t, err, name)
		require.Equal(t, "null", string(rawOfGenerated(v)), name)
		require.Equal(t, "null", string(valueJSON(b)), name)
	}

	// Invalid UTF-8 (which the generated code refuses, and proto.Marshal
	// will not write) is not JSON either.
	bad := protowire.AppendTag(nil, fieldValueString, protowire.BytesType)
	require.Equal(t, "null", string(valueJSON(protowire.AppendString(bad, "a\xffb"))))

	entry := func(k string, v *structpb.Value) []byte {
		vb, err := proto.Marshal(v)
		require.NoError(t, err)
		e := protowire.AppendTag(nil, 1, protowire.BytesType)
		e = protowire.AppendString(e, k)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		return protowire.AppendBytes(e, vb)
	}
	var st []byte
	for _, e := range [][]byte{entry("k", structpb.NewNumberValue(1)), entry("a", structpb.NewBoolValue(true)), entry("k", structpb.NewNumberValue(2))} {
		st = protowire.AppendTag(st, 1, protowire.BytesType)
		st = protowire.AppendBytes(st, e)
	}
	val := protowire.AppendTag(nil, fieldValueStruct, protowire.BytesType)
	val = protowire.AppendBytes(val, st)
	var generated structpb.Value
	require.NoError(t, proto.Unmarshal(val, &generated))
	require.Equal(t, string(rawOfGenerated(&generated)), string(valueJSON(val)))
	require.Equal(t, `{"a":true,"k":2}`, string(valueJSON(val)))

	// A job whose payload comes in two parts: a struct, then more fields.
	p1, err := proto.Marshal(value(t, map[string]any{"x": 1.0}))
	require.NoError(t, err)
	p2, err := proto.Marshal(value(t, map[string]any{"y": 2.0}))
	require.NoError(t, err)
	job := protowire.AppendTag(nil, fieldJobID, protowire.BytesType)
	job = protowire.AppendString(job, "j")
	for _, p := range [][]byte{p1, p2} {
		job = protowire.AppendTag(job, fieldJobPayload, protowire.BytesType)
		job = protowire.AppendBytes(job, p)
	}
	var lj jobbiev1.LeasedJob
	require.NoError(t, proto.Unmarshal(job, &lj))
	got, err := decodeJob(job)
	require.NoError(t, err)
	require.Equal(t, jobOfGenerated(&lj), got)
	require.JSONEq(t, `{"x":1,"y":2}`, string(got.Payload))

	deep := structpb.NewStringValue("x")
	for range maxValueDepth + 5 {
		deep = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{deep}})
	}
	b, err := proto.MarshalOptions{}.Marshal(deep)
	require.NoError(t, err)
	require.Equal(t, "null", string(valueJSON(b)), "nested deeper than proto reads")
	require.True(t, strings.HasPrefix(string(rawOfGenerated(structpb.NewListValue(&structpb.ListValue{}))), "["))
}
