package job

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	j := &Job{
		ID: "job_01HX0000000000000000000001", Queue: "emails.send", Payload: json.RawMessage(`{"to":"a"}`),
		State: Retrying, Priority: High, Attempt: 2, MaxRetries: 5, Backoff: BackoffLinear,
		BaseDelay: 5e9, MaxDelay: 6e11, CreatedAt: 1, ScheduledAt: 2, StartedAt: 3, CompletedAt: 4, FailedAt: 5,
		NextAttempt: 6, LeaseUntil: 7, LeaseNs: 8, ExpireAfter: 9, ExpireAt: 10, UniqueKey: "u", UniqueUntil: 11,
		Tags: map[string]string{"b": "2", "a": "1"}, Progress: json.RawMessage(`{"p":1}`), Checkpoint: json.RawMessage(`{"c":1}`),
		Result: json.RawMessage(`true`), Errors: []AttemptError{{Attempt: 1, Error: "e", Backtrace: "bt", At: 12}},
		WorkerID: "w", Hostname: "h", DeadReason: "r", UpdatedAt: -1,
		CancelRequestedAt: 13, CancelledAt: 14, DeadAt: 15, PruneAt: 16,
		Timeline: []Event{{At: 17, Kind: EvEnqueued}, {At: 18, Kind: EvStarted, Detail: "worker w attempt 1"}},
		BatchID:  "batch_x", ChainID: "chain_x", ChainStep: 2, Chain: []byte(`{"steps":[]}`),
		Flow: FlowChainExit | FlowHasDependents, DependsOn: []string{"job_a", "job_b"}, DepsLeft: 1,
		CancelReason: ReasonDependencyFailed, OwnLeaseNs: 19, Stored: 20,
		Keys:  &Keys{Concurrency: "tenant-9", Fairness: "customer-42"},
		Trace: &Trace{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "congo=t61rcWkgMzE"},
	}
	var got Job
	require.NoError(t, got.Decode(j.Encode()))
	require.Equal(t, *j, got)
	require.Equal(t, j.Encode(), got.Encode(), "deterministic bytes")

	var empty Job
	require.NoError(t, empty.Decode((&Job{}).Encode()))
	require.Equal(t, Job{}, empty)
}

func TestRecordDecodeErrors(t *testing.T) {
	t.Parallel()
	var j Job
	require.Error(t, j.Decode(nil))
	require.Error(t, j.Decode([]byte{9}))
	b := (&Job{ID: "job_x", Queue: "q"}).Encode()
	require.Error(t, j.Decode(append(b[:3:3], 0xff, 0xff)), "a length past the end is refused")
	// A record that ends early (an older, shorter version) decodes with zero trailing fields.
	require.NoError(t, j.Decode(b[:len(b)-3]))
}

// A record written before the job-management fields decodes with them unset.
func TestRecordDecodesOlderRecords(t *testing.T) {
	t.Parallel()
	j := &Job{ID: "job_x", Queue: "q", UpdatedAt: 5, CancelledAt: 9, Timeline: []Event{{At: 1, Kind: EvEnqueued}}}
	b := j.Encode()
	old := b[:len(b)-(4+1+3)-8-1] // up to UpdatedAt (8: the zero flow fields; 1: the zero own lease)
	var got Job
	require.NoError(t, got.Decode(old))
	require.Equal(t, int64(5), got.UpdatedAt)
	require.Zero(t, got.CancelledAt)
	require.Nil(t, got.Timeline)
}

// A record written before the flow fields decodes with them zero.
func TestRecordDecodesRecordsWithoutFlowFields(t *testing.T) {
	t.Parallel()
	j := &Job{ID: "job_x", Queue: "q", Timeline: []Event{{At: 1, Kind: EvEnqueued}}}
	b := j.Encode()
	j.BatchID, j.DependsOn, j.Flow = "batch_x", []string{"job_y"}, FlowHasDependents
	var got Job
	require.NoError(t, got.Decode(b[:len(b)-8-1]))
	require.Equal(t, "", got.BatchID)
	require.Nil(t, got.DependsOn)
	require.False(t, got.InFlow())
	require.NoError(t, got.Decode(j.Encode()))
	require.True(t, got.InFlow())
}

// A record written before the job's own lease decodes with it zero, and
// its other fields intact.
func TestRecordDecodesRecordsWithoutOwnLease(t *testing.T) {
	t.Parallel()
	j := &Job{ID: "job_x", Queue: "q", CancelReason: ReasonDependencyFailed, OwnLeaseNs: 5e9}
	b := j.Encode()
	var got Job
	require.Error(t, got.Decode(b[:len(b)-1]), "a varint cut short is refused")
	old := (&Job{ID: "job_x", Queue: "q", CancelReason: ReasonDependencyFailed}).Encode()
	old = old[:len(old)-1] // what the codec wrote before the field existed
	require.NoError(t, got.Decode(old))
	require.Equal(t, ReasonDependencyFailed, got.CancelReason)
	require.Zero(t, got.OwnLeaseNs)
	require.NoError(t, got.Decode(b))
	require.Equal(t, int64(5e9), got.OwnLeaseNs)
}

// A metered record carries the size its gauge counts (key and the fields
// before Stored); an unmetered one ends where it always did.
func TestRecordStoredSize(t *testing.T) {
	t.Parallel()
	j := &Job{ID: "job_x", Queue: "q", Payload: []byte(`{"a":1}`)}
	plain := j.Encode()
	b, delta := j.AppendMetered(nil, 10)
	require.Equal(t, int64(10+len(plain)), j.Stored, "key plus the fields before Stored")
	require.Equal(t, j.Stored, delta, "a record counted for the first time")
	require.Equal(t, plain, b[:len(plain)], "the same fields, then Stored")
	var got Job
	require.NoError(t, got.Decode(b))
	require.Equal(t, j.Stored, got.Stored)
	require.NoError(t, got.Decode(plain))
	require.Zero(t, got.Stored, "a record written before metering counts nothing")

	j.Payload = []byte(`{"a":12345}`)
	_, delta = j.AppendMetered(nil, 10)
	require.Equal(t, int64(4), delta, "a rewrite changes the gauge by the difference")
	_, delta = j.AppendMetered(nil, 10)
	require.Zero(t, delta)
}

// A keyed job's record ends with its keys after Stored (written even when
// not metered); an unkeyed one writes the bytes it always did. A metered
// keyed record counts its keys.
func TestRecordKeys(t *testing.T) {
	t.Parallel()
	plain := &Job{ID: "job_x", Queue: "q"}
	keyed := &Job{ID: "job_x", Queue: "q", Keys: &Keys{Fairness: "f"}}
	pb, kb := plain.Encode(), keyed.Encode()
	require.Equal(t, pb, kb[:len(pb)], "same fields first")
	require.Equal(t, []byte{0, 0, 1, 'f'}, kb[len(pb):], "Stored 0, then the keys")
	var got Job
	require.NoError(t, got.Decode(kb))
	require.Equal(t, *keyed, got)
	require.NoError(t, got.Decode(pb))
	require.Nil(t, got.Keys, "an older record has no keys")

	for _, j := range []*Job{{ID: "job_x", Queue: "q", Keys: &Keys{Concurrency: "c"}}, keyed} {
		b, _ := j.AppendMetered(nil, 10)
		require.Equal(t, int64(10+len(b)-len(binary.AppendVarint(nil, j.Stored))), j.Stored, "everything but Stored itself")
		got = Job{}
		require.NoError(t, got.Decode(b))
		require.Equal(t, *j, got)
	}
}

// A traced job's record ends with its trace context after the keys
// (written empty when it has none); a record written before traces, keyed
// or not, decodes with no trace. A metered traced record counts it.
func TestRecordTrace(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	plain := &Job{ID: "job_x", Queue: "q"}
	traced := &Job{ID: "job_x", Queue: "q", Trace: &Trace{Parent: tp}}
	pb, tb := plain.Encode(), traced.Encode()
	require.Equal(t, pb, tb[:len(pb)], "same fields first")
	require.Equal(t, append([]byte{0, 0, 0, 55}, tp...), tb[len(pb):len(tb)-1], "Stored 0, no keys, then the traceparent")
	require.Equal(t, byte(0), tb[len(tb)-1], "an empty tracestate")
	var got Job
	require.NoError(t, got.Decode(tb))
	require.Equal(t, *traced, got)

	keyed := &Job{ID: "job_x", Queue: "q", Keys: &Keys{Fairness: "f"}}
	for _, old := range []*Job{plain, keyed} {
		got = Job{}
		require.NoError(t, got.Decode(old.Encode()), "a record written before traces")
		require.Nil(t, got.Trace, "reads as no trace")
		require.Equal(t, *old, got)
	}

	both := &Job{ID: "job_x", Queue: "q", Keys: &Keys{Concurrency: "c"}, Trace: &Trace{Parent: tp, State: "a=1"}}
	for _, j := range []*Job{traced, both} {
		b, _ := j.AppendMetered(nil, 10)
		require.Equal(t, int64(10+len(b)-len(binary.AppendVarint(nil, j.Stored))), j.Stored, "everything but Stored itself")
		got = Job{}
		require.NoError(t, got.Decode(b))
		require.Equal(t, *j, got)
		require.Equal(t, b, got.Encode(), "deterministic bytes")
	}
	c := both.Clone()
	require.Equal(t, both.TraceParent(), c.TraceParent())
	require.Equal(t, "a=1", c.TraceState())
}

func TestPayloadOf(t *testing.T) {
	t.Parallel()
	j := &Job{ID: "job_1", Queue: "emails", Payload: []byte(`{"to":"a@b.c"}`), Tags: map[string]string{"k": "v"}}
	p, err := PayloadOf(j.Encode())
	require.NoError(t, err)
	require.Equal(t, `{"to":"a@b.c"}`, string(p))
	p, err = PayloadOf((&Job{ID: "job_2"}).Encode())
	require.NoError(t, err)
	require.Empty(t, p)
	_, err = PayloadOf([]byte{recordVersion, 5, 'a'})
	require.Error(t, err)
	_, err = PayloadOf(nil)
	require.Error(t, err)
}

// The schema versions a job was checked against round-trip, after the
// keys and trace written empty when it has neither; a job without them
// writes the bytes it wrote before them.
func TestSchemaVersionsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, j := range []*Job{
		{ID: "job_1", Queue: "q", Schema: &Schema{Version: 7}},
		{ID: "job_2", Queue: "q", Schema: &Schema{Version: 0, Steps: []uint32{0, 300000, 0, 2}}, Trace: &Trace{Parent: "p", State: "s"}},
		{ID: "job_3", Queue: "q", Schema: &Schema{Version: 1}, Stored: 99},
	} {
		j.SetKeys("ck", "")
		b := j.Encode()
		var got Job
		require.NoError(t, got.Decode(b))
		require.Equal(t, j.Schema, got.Schema)
		require.Equal(t, j.Trace, got.Trace)
		require.Equal(t, j.ConcurrencyKey(), got.ConcurrencyKey())
		m, _ := j.AppendMetered(nil, 10)
		require.Equal(t, int64(10+len(m)-len(binary.AppendVarint(nil, j.Stored))), j.Stored, "Stored counts the whole record")
	}
	plain := &Job{ID: "job_4", Queue: "q"}
	withNil := &Job{ID: "job_4", Queue: "q", Schema: nil}
	require.Equal(t, plain.Encode(), withNil.Encode())
	var got Job
	require.NoError(t, got.Decode(plain.Encode()))
	require.Nil(t, got.Schema)
}
