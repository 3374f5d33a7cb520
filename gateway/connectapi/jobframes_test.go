package connectapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// notCarried are wire.FetchedJob's JSON fields that LeasedJob has no
// field for (none now): a new field of FetchedJob must be carried or
// named here.
var notCarried = map[string]bool{}

// sampleJob is a FetchedJob with every field set, found by reflection,
// so a field added later is in it too; JSON fields hold a value of
// every JSON kind.
func sampleJob(t *testing.T, i int) wire.FetchedJob {
	t.Helper()
	var j wire.FetchedJob
	v := reflect.ValueOf(&j).Elem()
	for k := range v.NumField() {
		f, name := v.Field(k), v.Type().Field(k).Name
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes(fmt.Appendf(nil, `{"n":%d.5,"s":"%s é \"q\"","b":true,"z":null,"l":[1,"two",[3],{"four":4}],"o":{"deep":{"x":-1e-3}}}`, i, name))
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("%s-%d", strings.ToLower(name), i))
		case f.Kind() == reflect.Int:
			f.SetInt(int64(i*10 + k))
		case f.Kind() == reflect.Float64:
			f.SetFloat(float64(i) + 0.25)
		case f.Type() == reflect.TypeFor[map[string]string]():
			f.Set(reflect.ValueOf(map[string]string{"team": name, "n": fmt.Sprint(i)}))
		default:
			t.Fatalf("sampleJob: no sample for FetchedJob.%s (%s): add one", name, f.Type())
		}
	}
	return j
}

// The job frames built by hand (leasedJobs) are what protojson makes of
// the same fetch answer, for every field of LeasedJob; every field of
// the answer's jobs is carried or named in notCarried; a worker that
// asked for JSON payloads gets the same jobs with the shard's JSON in
// place of the Values.
func TestLeasedJobsMatchProtojson(t *testing.T) {
	t.Parallel()
	jobs := []wire.FetchedJob{sampleJob(t, 1), sampleJob(t, 2)}
	jobs[1].Checkpoint = json.RawMessage("null") // what a first attempt has
	jobs = append(jobs, wire.FetchedJob{JobID: "bare", Payload: json.RawMessage(`"x"`)})
	body, err := json.Marshal(wire.FetchBatchResponse{Jobs: jobs})
	require.NoError(t, err)

	var want jobbiev1.WorkResponse
	require.NoError(t, unmarshal.Unmarshal(body, &want))
	got, err := leasedJobs(body, false)
	require.NoError(t, err)
	require.Empty(t, got.unsendable)
	require.Empty(t, cmpProto(want.GetJobs(), got.jobs))

	asJSON, err := leasedJobs(body, true)
	require.NoError(t, err)
	require.Empty(t, asJSON.unsendable)
	for i, j := range want.GetJobs() {
		j.Payload, j.Checkpoint, j.PayloadJson = nil, nil, jobs[i].Payload
		if string(jobs[i].Checkpoint) != "null" {
			j.CheckpointJson = jobs[i].Checkpoint
		}
	}
	require.Empty(t, cmpProto(want.GetJobs(), asJSON.jobs))

	fields := (&jobbiev1.LeasedJob{}).ProtoReflect().Descriptor().Fields()
	for k := range fields.Len() {
		fd := fields.Get(k)
		require.True(t, got.jobs[0].ProtoReflect().Has(fd) || asJSON.jobs[0].ProtoReflect().Has(fd),
			"LeasedJob.%s is not filled from a job that has every field", fd.Name())
	}
	for k := range reflect.TypeFor[wire.FetchedJob]().NumField() {
		name, _, _ := strings.Cut(reflect.TypeFor[wire.FetchedJob]().Field(k).Tag.Get("json"), ",")
		if !notCarried[name] {
			require.NotNil(t, fields.ByName(protoreflect.Name(name)), "FetchedJob's %q has no LeasedJob field: carry it, or name it in notCarried", name)
		}
	}
}

// A job whose payload or checkpoint no Value can hold (JSON allows a
// number past float64's range) is left out of the frame with its reason,
// and the rest of the answer is sent; as JSON it is sent as it is.
func TestLeasedJobsUnsendable(t *testing.T) {
	t.Parallel()
	jobs := leasable(4)
	jobs[1].Payload = json.RawMessage(`{"amount":1e999}`)
	jobs[2].Checkpoint = json.RawMessage(`[-1e400]`)
	body, err := json.Marshal(wire.FetchBatchResponse{Jobs: jobs, Cancels: []wire.JobCancel{{JobID: "c", LeaseToken: "t"}}})
	require.NoError(t, err)

	got, err := leasedJobs(body, false)
	require.NoError(t, err)
	require.Len(t, got.jobs, 2)
	require.Equal(t, []string{"job_0", "job_3"}, []string{got.jobs[0].GetJobId(), got.jobs[1].GetJobId()})
	require.Len(t, got.cancels, 1)
	require.Len(t, got.unsendable, 2)
	require.Equal(t, "job_1", got.unsendable[0].jobID)
	require.Equal(t, "tok1", got.unsendable[0].leaseToken)
	require.ErrorContains(t, got.unsendable[0].err, "payload")
	require.Equal(t, "job_2", got.unsendable[1].jobID)
	require.ErrorContains(t, got.unsendable[1].err, "checkpoint")

	got, err = leasedJobs(body, true)
	require.NoError(t, err)
	require.Empty(t, got.unsendable)
	require.Len(t, got.jobs, 4)
	require.Equal(t, `{"amount":1e999}`, string(got.jobs[1].GetPayloadJson()))
	require.Equal(t, `[-1e400]`, string(got.jobs[2].GetCheckpointJson()))
}

// cmpProto is the difference of two lists of messages, empty when equal.
func cmpProto(want, got []*jobbiev1.LeasedJob) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d jobs, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(want[i], got[i]) {
			return fmt.Sprintf("job %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	return ""
}

// BenchmarkLeasedJobs is one job frame of 100 jobs made from a fetch
// answer, with and without a trace context: carrying it must cost the
// jobs without one nothing (docs/BENCHMARKS.md, "The worker stream");
// and for a worker that asked for JSON payloads ("json", untraced).
func BenchmarkLeasedJobs(b *testing.B) {
	for _, c := range []struct {
		name          string
		parent, state string
		asJSON        bool
	}{{"untraced", "", "", false}, {"traced", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=v1", false}, {"json", "", "", true}} {
		b.Run(c.name, func(b *testing.B) {
			jobs := make([]wire.FetchedJob, 100)
			for i := range jobs {
				jobs[i] = wire.FetchedJob{JobID: fmt.Sprintf("job_%026d", i), Queue: "emails.send",
					Payload: json.RawMessage(`{"to":"user@example.com","template":"welcome","n":1}`), Attempt: 1, MaxRetries: 25,
					LeaseDuration: 60, Checkpoint: json.RawMessage("null"), Tags: map[string]string{"team": "growth"},
					LeaseToken: "lt_0123456789abcdef", TraceParent: c.parent, TraceState: c.state}
			}
			body, err := json.Marshal(wire.FetchBatchResponse{Jobs: jobs})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if got, err := leasedJobs(body, c.asJSON); err != nil || len(got.jobs) != len(jobs) {
					b.Fatal(err, len(got.jobs))
				}
			}
		})
	}
}

// BenchmarkJobFrameMarshal is the frame of BenchmarkLeasedJobs/untraced
// written to the wire, its payloads as Values and as JSON.
func BenchmarkJobFrameMarshal(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		b.Run(map[bool]string{false: "values", true: "json"}[asJSON], func(b *testing.B) {
			jobs := make([]wire.FetchedJob, 100)
			for i := range jobs {
				jobs[i] = wire.FetchedJob{JobID: fmt.Sprintf("job_%026d", i), Queue: "emails.send",
					Payload: json.RawMessage(`{"to":"user@example.com","template":"welcome","n":1}`), Attempt: 1, MaxRetries: 25,
					LeaseDuration: 60, Checkpoint: json.RawMessage("null"), Tags: map[string]string{"team": "growth"},
					LeaseToken: "lt_0123456789abcdef"}
			}
			body, err := json.Marshal(wire.FetchBatchResponse{Jobs: jobs})
			require.NoError(b, err)
			got, err := leasedJobs(body, asJSON)
			require.NoError(b, err)
			frame := &jobbiev1.WorkResponse{Jobs: got.jobs}
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], frame); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(buf)), "frame-bytes")
		})
	}
}
