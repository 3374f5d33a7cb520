package bench

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The stream's frames, read and written by hand. The bench reads only a
// job's id and lease token and a result's correlation id and error code,
// and writes only acks and credit; decoding whole WorkResponses with the
// generated code (reflection, and each job's payload a
// google.protobuf.Value with a map) was a third of the bench's CPU on
// the stream load, which is measured as the client's cost.

// Field numbers in proto/jobbie/v1/worker.proto.
const (
	fieldReqCredit     = 2 // WorkRequest.credit
	fieldReqAcks       = 3 // WorkRequest.acks
	fieldCreditN       = 1 // Credit.n
	fieldAckCorrID     = 1 // Ack.correlation_id
	fieldAckJobID      = 2 // Ack.job_id
	fieldAckLeaseToken = 3 // Ack.lease_token
	fieldResJobs       = 1 // WorkResponse.jobs
	fieldResResults    = 2 // WorkResponse.results
	fieldJobID         = 1 // LeasedJob.job_id
	fieldJobLeaseToken = 9 // LeasedJob.lease_token
	fieldResultCorrID  = 1 // Result.correlation_id
	fieldResultErrCode = 3 // Result.error_code
)

// streamCodec is the bench stream's "proto" codec: an *ackFrame is
// written as it was built, any other message (the hello) by proto; what
// the server sends is read into a *jobFrame.
type streamCodec struct{}

func (streamCodec) Name() string { return "proto" }

func (c streamCodec) Marshal(m any) ([]byte, error) { return c.MarshalAppend(nil, m) }

// MarshalAppend lets connect write into its pooled buffer.
func (streamCodec) MarshalAppend(b []byte, m any) ([]byte, error) {
	switch m := m.(type) {
	case *ackFrame:
		return append(b, m.buf...), nil
	case proto.Message:
		return proto.MarshalOptions{}.MarshalAppend(b, m)
	}
	return nil, fmt.Errorf("bench stream: cannot marshal %T", m)
}

func (streamCodec) Unmarshal(b []byte, m any) error {
	f, ok := m.(*jobFrame)
	if !ok {
		return fmt.Errorf("bench stream: cannot unmarshal into %T", m)
	}
	return f.decode(b)
}

// ackFrame is a WorkRequest of acks and credit, encoded as it is built;
// reused frame after frame.
type ackFrame struct{ buf []byte }

func (f *ackFrame) reset() { f.buf = f.buf[:0] }

// ack adds an Ack of the job.
func (f *ackFrame) ack(corrID uint64, jobID string, token []byte) {
	n := protowire.SizeTag(fieldAckCorrID) + protowire.SizeVarint(corrID)
	if jobID != "" {
		n += protowire.SizeTag(fieldAckJobID) + protowire.SizeBytes(len(jobID))
	}
	if len(token) > 0 {
		n += protowire.SizeTag(fieldAckLeaseToken) + protowire.SizeBytes(len(token))
	}
	b := protowire.AppendTag(f.buf, fieldReqAcks, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	b = protowire.AppendTag(b, fieldAckCorrID, protowire.VarintType)
	b = protowire.AppendVarint(b, corrID)
	if jobID != "" {
		b = protowire.AppendTag(b, fieldAckJobID, protowire.BytesType)
		b = protowire.AppendString(b, jobID)
	}
	if len(token) > 0 {
		b = protowire.AppendTag(b, fieldAckLeaseToken, protowire.BytesType)
		b = protowire.AppendBytes(b, token)
	}
	f.buf = b
}

// credit grants n more jobs (n > 0).
func (f *ackFrame) credit(n int32) {
	b := protowire.AppendTag(f.buf, fieldReqCredit, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(protowire.SizeTag(fieldCreditN)+protowire.SizeVarint(uint64(n))))
	b = protowire.AppendTag(b, fieldCreditN, protowire.VarintType)
	f.buf = protowire.AppendVarint(b, uint64(n))
}

// jobFrame is what the bench reads of a WorkResponse; reused frame after
// frame (reset before each Receive: connect leaves the message untouched
// when a frame is empty).
type jobFrame struct {
	jobs    []frameJob
	results []frameResult
	ids     []byte // the frame's job ids, made one string at the end
	tokens  []byte // the frame's lease tokens
}

// frameJob is a job handed over. token is valid until the next frame.
type frameJob struct {
	id    string
	token []byte
	// offsets into the frame's ids and tokens while decoding
	id0, id1, tok0, tok1 int
}

type frameResult struct {
	corrID  uint64
	errCode string
}

func (f *jobFrame) reset() {
	f.jobs, f.results, f.ids, f.tokens = f.jobs[:0], f.results[:0], f.ids[:0], f.tokens[:0]
}

// decode reads b (connect's buffer, reused after the call: nothing of it
// is kept), skipping every field the bench does not read.
func (f *jobFrame) decode(b []byte) error {
	f.reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == fieldResJobs || num == fieldResResults) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			var err error
			if num == fieldResJobs {
				err = f.decodeJob(v)
			} else {
				err = f.decodeResult(v)
			}
			if err != nil {
				return err
			}
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	ids := string(f.ids) // one allocation a frame; the tracker may keep an id
	for i := range f.jobs {
		j := &f.jobs[i]
		j.id, j.token = ids[j.id0:j.id1], f.tokens[j.tok0:j.tok1:j.tok1]
	}
	return nil
}

func (f *jobFrame) decodeJob(b []byte) error {
	j := frameJob{id0: len(f.ids), id1: len(f.ids), tok0: len(f.tokens), tok1: len(f.tokens)}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == fieldJobID || num == fieldJobLeaseToken) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if num == fieldJobID { // the last one wins, as in proto
				f.ids = append(f.ids, v...)
				j.id0, j.id1 = len(f.ids)-len(v), len(f.ids)
			} else {
				f.tokens = append(f.tokens, v...)
				j.tok0, j.tok1 = len(f.tokens)-len(v), len(f.tokens)
			}
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	f.jobs = append(f.jobs, j)
	return nil
}

func (f *jobFrame) decodeResult(b []byte) error {
	var r frameResult
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == fieldResultCorrID && typ == protowire.VarintType:
			r.corrID, n = protowire.ConsumeVarint(b)
		case num == fieldResultErrCode && typ == protowire.BytesType:
			var v []byte
			if v, n = protowire.ConsumeBytes(b); n >= 0 {
				r.errCode = string(v) // rare: only a refused ack has one
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	f.results = append(f.results, r)
	return nil
}
