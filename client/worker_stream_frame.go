package client

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// The stream's frames from the server, read with the jobs made straight
// into Jobs. The worker's hello asks for JSON payloads, so a job's
// payload and checkpoint come as the JSON bytes a handler reads
// (payload_json, checkpoint_json), copied as they are. A server that
// does not know that field sends them as google.protobuf.Values, which
// become the JSON without building structpb values and printing them
// with protojson (about a third of the worker's CPU a job on a busy
// stream when done so). Everything else in a frame (results, cancels,
// drain) is read by the generated code.

// Field numbers in proto/jobbie/v1/worker.proto and struct.proto.
const (
	fieldResJobs           = 1  // WorkResponse.jobs
	fieldJobID             = 1  // LeasedJob.job_id
	fieldJobQueue          = 2  // LeasedJob.queue
	fieldJobPayload        = 3  // LeasedJob.payload
	fieldJobAttempt        = 4  // LeasedJob.attempt
	fieldJobMaxRetries     = 5  // LeasedJob.max_retries
	fieldJobLeaseDuration  = 6  // LeasedJob.lease_duration
	fieldJobCheckpoint     = 7  // LeasedJob.checkpoint
	fieldJobTags           = 8  // LeasedJob.tags
	fieldJobLeaseToken     = 9  // LeasedJob.lease_token
	fieldJobTraceparent    = 10 // LeasedJob.traceparent
	fieldJobTracestate     = 11 // LeasedJob.tracestate
	fieldJobPayloadJSON    = 12 // LeasedJob.payload_json
	fieldJobCheckpointJSON = 13 // LeasedJob.checkpoint_json
	fieldValueNull         = 1  // Value.null_value
	fieldValueNumber       = 2  // Value.number_value
	fieldValueString       = 3  // Value.string_value
	fieldValueBool         = 4  // Value.bool_value
	fieldValueStruct       = 5  // Value.struct_value
	fieldValueList         = 6  // Value.list_value
	fieldListValues        = 1  // ListValue.values; Struct.fields and map entries' key too
	fieldEntryValue        = 2  // a map entry's value
)

// maxValueDepth bounds the nesting of a Value, as proto's decoding does.
const maxValueDepth = 10000

var errNoKind = errors.New("google.protobuf.Value: none of the oneof fields is set")

// streamCodec is the stream's "proto" codec: requests are written by
// proto; what the server sends is read into a *streamFrame.
type streamCodec struct{}

func (streamCodec) Name() string { return "proto" }

func (c streamCodec) Marshal(m any) ([]byte, error) { return c.MarshalAppend(nil, m) }

func (streamCodec) MarshalAppend(b []byte, m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("jobbie worker stream: cannot marshal %T", m)
	}
	return proto.MarshalOptions{}.MarshalAppend(b, pm)
}

func (streamCodec) Unmarshal(b []byte, m any) error {
	f, ok := m.(*streamFrame)
	if !ok {
		return fmt.Errorf("jobbie worker stream: cannot unmarshal into %T", m)
	}
	return f.decode(b)
}

// streamFrame is a WorkResponse: its jobs as Jobs, the rest as sent.
type streamFrame struct {
	jobs []*Job
	res  jobbiev1.WorkResponse // without its jobs
}

// decode reads b (connect's buffer, reused after the call: nothing of it
// is kept).
func (f *streamFrame) decode(b []byte) error {
	var rest []byte
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		field := b
		b = b[n:]
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return protowire.ParseError(n)
		}
		if num == fieldResJobs && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b)
			job, err := decodeJob(v)
			if err != nil {
				return fmt.Errorf("jobbie worker stream: a job: %w", err)
			}
			f.jobs = append(f.jobs, job)
		} else {
			rest = append(rest, field[:len(field)-len(b)+n]...)
		}
		b = b[n:]
	}
	return proto.Unmarshal(rest, &f.res)
}

// decodeJob is a LeasedJob as a handler sees it, or the error of a job
// the generated code refuses (a payload or checkpoint Value it reads
// that is not a JSON value reads as null, as protojson's refusal did).
// Its JSON payload and checkpoint, when sent, are taken over the Values.
func decodeJob(b []byte) (*Job, error) {
	job := &Job{Payload: jsonNull}
	var payload, checkpoint, payloadJSON, checkpointJSON []byte
	hasPayload, hasCheckpoint := false, false
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num == fieldJobTags && job.Tags == nil { // as the generated code, whatever the wire type
			job.Tags = map[string]string{}
		}
		switch {
		case typ == protowire.BytesType && (num == fieldJobPayload || num == fieldJobCheckpoint || num == fieldJobTags):
			var v []byte
			if v, n = protowire.ConsumeBytes(b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			switch num { // a message field seen twice is merged: its parts, in order, each read on its own by proto
			case fieldJobPayload:
				if err := checkValue(v, valueDepth); err != nil {
					return nil, fmt.Errorf("payload: %w", err)
				}
				payload, hasPayload = merge(payload, v), true
			case fieldJobCheckpoint:
				if err := checkValue(v, valueDepth); err != nil {
					return nil, fmt.Errorf("checkpoint: %w", err)
				}
				checkpoint, hasCheckpoint = merge(checkpoint, v), true
			default:
				k, val, err := mapEntry(v)
				if err != nil {
					return nil, err
				}
				job.Tags[k] = val
			}
		case typ == protowire.BytesType && (num == fieldJobPayloadJSON || num == fieldJobCheckpointJSON):
			var v []byte
			if v, n = protowire.ConsumeBytes(b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			if num == fieldJobPayloadJSON { // bytes: the last one wins, as in proto
				payloadJSON = v
			} else {
				checkpointJSON = v
			}
		case typ == protowire.BytesType && isJobString(num):
			var v []byte
			if v, n = protowire.ConsumeBytes(b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			if err := validUTF8(v); err != nil { // proto3's strings are
				return nil, err
			}
			setJobString(job, num, string(v))
		case typ == protowire.VarintType && (num == fieldJobAttempt || num == fieldJobMaxRetries):
			var v uint64
			if v, n = protowire.ConsumeVarint(b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			if num == fieldJobAttempt {
				job.Attempt = int(int32(v))
			} else {
				job.MaxRetries = int(int32(v))
			}
		case typ == protowire.Fixed64Type && num == fieldJobLeaseDuration:
			var v uint64
			if v, n = protowire.ConsumeFixed64(b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			job.LeaseDuration = time.Duration(math.Float64frombits(v) * float64(time.Second))
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, protowire.ParseError(n)
			}
		}
		b = b[n:]
	}
	switch { // copied: the frame's buffer is reused
	case len(payloadJSON) > 0:
		job.Payload = bytes.Clone(payloadJSON)
	case hasPayload:
		job.Payload = valueJSON(payload)
	}
	switch {
	case len(checkpointJSON) > 0:
		if !bytes.Equal(checkpointJSON, jsonNull) {
			job.Checkpoint = bytes.Clone(checkpointJSON)
		}
	case hasCheckpoint && !isNullValue(checkpoint):
		job.Checkpoint = valueJSON(checkpoint)
	}
	return job, nil
}

var jsonNull = []byte("null")

// merge is a message field's bytes with v's after them (proto merges a
// message sent twice); the first part is v itself, not copied, and
// clipped so that appending to it never writes over the frame.
func merge(m, v []byte) []byte {
	if m == nil {
		return v[:len(v):len(v)]
	}
	return append(m, v...)
}

func isJobString(num protowire.Number) bool {
	switch num {
	case fieldJobID, fieldJobQueue, fieldJobLeaseToken, fieldJobTraceparent, fieldJobTracestate:
		return true
	}
	return false
}

func setJobString(job *Job, num protowire.Number, s string) {
	switch num {
	case fieldJobID:
		job.ID = s
	case fieldJobQueue:
		job.Queue = s
	case fieldJobLeaseToken:
		job.LeaseToken = s
	case fieldJobTraceparent:
		job.TraceParent = s
	case fieldJobTracestate:
		job.TraceState = s
	}
}

// entry is a map entry's key and value bytes (a missing part is empty);
// a message value sent twice is merged, a string's last part wins.
func entry(b []byte, message bool) (key string, value []byte, err error) {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return "", nil, protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == fieldListValues || num == fieldEntryValue) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", nil, protowire.ParseError(n)
			}
			b = b[n:]
			if num == fieldListValues {
				key = string(v)
			} else if message {
				value = merge(value, v)
			} else { // a string sent twice: the last
				value = v
			}
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return "", nil, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return key, value, nil
}

// mapEntry is a map<string, string> entry.
func mapEntry(b []byte) (string, string, error) {
	k, v, err := entry(b, false)
	if err == nil && (!utf8.ValidString(k) || !utf8.Valid(v)) {
		err = errInvalidUTF8
	}
	return k, string(v), err
}
