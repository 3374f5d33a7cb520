package client

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// The stream's frames from the server, read with the jobs made straight
// into Jobs: a job's payload and checkpoint (google.protobuf.Value on the
// wire) become the JSON a handler reads without building structpb values
// and printing them with protojson, which was about a third of the
// worker's CPU a job on a busy stream. Everything else in a frame
// (results, cancels, drain) is read by the generated code.

// Field numbers in proto/jobbie/v1/worker.proto and struct.proto.
const (
	fieldResJobs          = 1  // WorkResponse.jobs
	fieldJobID            = 1  // LeasedJob.job_id
	fieldJobQueue         = 2  // LeasedJob.queue
	fieldJobPayload       = 3  // LeasedJob.payload
	fieldJobAttempt       = 4  // LeasedJob.attempt
	fieldJobMaxRetries    = 5  // LeasedJob.max_retries
	fieldJobLeaseDuration = 6  // LeasedJob.lease_duration
	fieldJobCheckpoint    = 7  // LeasedJob.checkpoint
	fieldJobTags          = 8  // LeasedJob.tags
	fieldJobLeaseToken    = 9  // LeasedJob.lease_token
	fieldJobTraceparent   = 10 // LeasedJob.traceparent
	fieldJobTracestate    = 11 // LeasedJob.tracestate
	fieldValueNull        = 1  // Value.null_value
	fieldValueNumber      = 2  // Value.number_value
	fieldValueString      = 3  // Value.string_value
	fieldValueBool        = 4  // Value.bool_value
	fieldValueStruct      = 5  // Value.struct_value
	fieldValueList        = 6  // Value.list_value
	fieldListValues       = 1  // ListValue.values; Struct.fields and map entries' key too
	fieldEntryValue       = 2  // a map entry's value
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
		num, typ, n := protowire.ConsumeTag(b)
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
// the generated code refuses (a payload or checkpoint it reads that is
// not a JSON value reads as null, as protojson's refusal did).
func decodeJob(b []byte) (*Job, error) {
	job := &Job{Payload: jsonNull}
	var payload, checkpoint []byte
	hasPayload, hasCheckpoint := false, false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
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
			switch num { // a message field seen twice is merged: its parts, in order
			case fieldJobPayload:
				payload, hasPayload = merge(payload, v), true
			case fieldJobCheckpoint:
				checkpoint, hasCheckpoint = merge(checkpoint, v), true
			default:
				k, val, err := mapEntry(v)
				if err != nil {
					return nil, err
				}
				job.Tags[k] = val
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
	if hasPayload {
		if err := checkValue(payload, valueDepth); err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
		job.Payload = valueJSON(payload)
	}
	if hasCheckpoint {
		if err := checkValue(checkpoint, valueDepth); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		if !isNullValue(checkpoint) {
			job.Checkpoint = valueJSON(checkpoint)
		}
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

// valueJSON is a Value's JSON, or null when it has none.
func valueJSON(b []byte) []byte {
	out, err := appendValueJSON(make([]byte, 0, len(b)+len(b)/4), b, 0)
	if err != nil {
		return jsonNull
	}
	return out
}

// valueKind is the Value's kind field (the last one set wins; a struct
// or list sent twice in a row is merged, as proto merges it): its number
// and its value, a string's or message's without the length.
func valueKind(b []byte) (num protowire.Number, v []byte, err error) {
	for len(b) > 0 {
		n, t, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, nil, protowire.ParseError(l)
		}
		b = b[l:]
		if l = protowire.ConsumeFieldValue(n, t, b); l < 0 {
			return 0, nil, protowire.ParseError(l)
		}
		if n >= fieldValueNull && n <= fieldValueList && t == kindType(n) {
			x := b[:l]
			if t == protowire.BytesType {
				x, _ = protowire.ConsumeBytes(x)
			}
			if n == num && (n == fieldValueStruct || n == fieldValueList) {
				v = merge(v, x)
			} else {
				num, v = n, x[:len(x):len(x)]
			}
		}
		b = b[l:]
	}
	if num == 0 {
		return 0, nil, errNoKind
	}
	return num, v, nil
}

func kindType(n protowire.Number) protowire.Type {
	switch n {
	case fieldValueNumber:
		return protowire.Fixed64Type
	case fieldValueNull, fieldValueBool:
		return protowire.VarintType
	}
	return protowire.BytesType
}

// isNullValue reports a Value whose kind is null.
func isNullValue(b []byte) bool {
	num, _, err := valueKind(b)
	return err == nil && num == fieldValueNull
}

// appendValueJSON appends the JSON of the Value encoded in b: the JSON
// protojson prints (object keys sorted, a repeated key's last value),
// without its whitespace.
func appendValueJSON(out, b []byte, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return nil, errors.New("google.protobuf.Value: nested too deep")
	}
	num, v, err := valueKind(b)
	if err != nil {
		return nil, err
	}
	switch num {
	case fieldValueNull:
		return append(out, "null"...), nil
	case fieldValueBool:
		x, _ := protowire.ConsumeVarint(v)
		return strconv.AppendBool(out, x != 0), nil
	case fieldValueNumber:
		x, _ := protowire.ConsumeFixed64(v)
		return appendNumber(out, math.Float64frombits(x))
	case fieldValueString:
		return appendJSONString(out, v)
	case fieldValueList:
		return appendList(out, v, depth)
	default:
		return appendStruct(out, v, depth)
	}
}

func appendList(out, b []byte, depth int) ([]byte, error) {
	out = append(out, '[')
	first := true
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num != fieldListValues || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if !first {
			out = append(out, ',')
		}
		first = false
		var err error
		if out, err = appendValueJSON(out, v, depth+1); err != nil {
			return nil, err
		}
	}
	return append(out, ']'), nil
}

type structField struct {
	key   string
	value []byte
}

func appendStruct(out, b []byte, depth int) ([]byte, error) {
	var fields []structField
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num != fieldListValues || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		e, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		k, v, err := entry(e, true)
		if err != nil {
			return nil, err
		}
		fields = append(fields, structField{key: k, value: v})
	}
	// protojson's order; of a key sent twice, the last (a map's rule).
	slices.SortStableFunc(fields, func(a, b structField) int { return strings.Compare(a.key, b.key) })
	out = append(out, '{')
	first := true
	for i, f := range fields {
		if i+1 < len(fields) && fields[i+1].key == f.key {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		var err error
		if out, err = appendJSONString(out, []byte(f.key)); err != nil {
			return nil, err
		}
		out = append(out, ':')
		if out, err = appendValueJSON(out, f.value, depth+1); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// entry is a map entry's key and value bytes (a missing part is empty);
// a message value sent twice is merged, a string's last part wins.
func entry(b []byte, message bool) (key string, value []byte, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
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

// appendNumber prints a number as protojson does (as encoding/json);
// NaN and infinities are not JSON numbers.
func appendNumber(out []byte, x float64) ([]byte, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("google.protobuf.Value.number_value: invalid %v value", x)
	}
	format := byte('f')
	if abs := math.Abs(x); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, x, format, -1, 64)
	if format == 'e' { // e-07 → e-7
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out, nil
}

// appendJSONString quotes s as protojson does; it must be UTF-8.
func appendJSONString(out, s []byte) ([]byte, error) {
	out = append(out, '"')
	for len(s) > 0 {
		c := s[0]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s)
			if r == utf8.RuneError && n == 1 {
				return nil, errors.New("google.protobuf.Value: invalid UTF-8")
			}
			out, s = append(out, s[:n]...), s[n:]
			continue
		}
		s = s[1:]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c >= ' ':
			out = append(out, c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
	}
	return append(out, '"'), nil
}
