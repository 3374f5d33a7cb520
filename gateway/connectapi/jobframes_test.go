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
// the answer's jobs is carried or named in notCarried.
func TestLeasedJobsMatchProtojson(t *testing.T) {
	t.Parallel()
	jobs := []wire.FetchedJob{sampleJob(t, 1), sampleJob(t, 2)}
	jobs[1].Checkpoint = json.RawMessage("null") // what a first attempt has
	jobs = append(jobs, wire.FetchedJob{JobID: "bare", Payload: json.RawMessage(`"x"`)})
	body, err := json.Marshal(wire.FetchBatchResponse{Jobs: jobs})
	require.NoError(t, err)

	var want jobbiev1.WorkResponse
	require.NoError(t, unmarshal.Unmarshal(body, &want))
	got, _, err := leasedJobs(body)
	require.NoError(t, err)
	require.Empty(t, cmpProto(want.GetJobs(), got))

	fields := (&jobbiev1.LeasedJob{}).ProtoReflect().Descriptor().Fields()
	m := got[0].ProtoReflect()
	for k := range fields.Len() {
		require.True(t, m.Has(fields.Get(k)), "LeasedJob.%s is not filled from a job that has every field", fields.Get(k).Name())
	}
	for k := range reflect.TypeFor[wire.FetchedJob]().NumField() {
		name, _, _ := strings.Cut(reflect.TypeFor[wire.FetchedJob]().Field(k).Tag.Get("json"), ",")
		if !notCarried[name] {
			require.NotNil(t, fields.ByName(protoreflect.Name(name)), "FetchedJob's %q has no LeasedJob field: carry it, or name it in notCarried", name)
		}
	}
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
// jobs without one nothing (docs/BENCHMARKS.md, "The worker stream").
func BenchmarkLeasedJobs(b *testing.B) {
	for _, c := range []struct {
		name          string
		parent, state string
	}{{"untraced", "", ""}, {"traced", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=v1"}} {
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
				if _, _, err := leasedJobs(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
