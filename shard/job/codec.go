package job

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// On-disk encoding of a job record, never change what is written: a
// version byte, then the fields in the order of encode below. New fields
// are appended at the end; a record that ends early leaves them zero, so
// older records stay readable. Hand-written because the record is read and
// written on every fetch and ack.
const recordVersion = 1

// Encode returns the stored bytes of j.
func (j *Job) Encode() []byte {
	return j.AppendEncoded(make([]byte, 0, 160+len(j.Payload)+len(j.Progress)+len(j.Checkpoint)+len(j.Result)+24*len(j.Timeline)))
}

// AppendEncoded appends j's record to b, so a writer can reuse a buffer.
func (j *Job) AppendEncoded(b []byte) []byte {
	return j.appendTail(j.appendStored(j.appendFields(b)))
}

// AppendMetered is AppendEncoded for a shard that meters usage: it sets
// Stored to the size the record counts for, keyLen plus its fields before
// Stored, and returns the change from what Stored was.
func (j *Job) AppendMetered(b []byte, keyLen int) ([]byte, int64) {
	start := len(b)
	b = j.appendFields(b)
	old := j.Stored
	j.Stored = int64(keyLen + len(b) - start + j.keysLen())
	return j.appendTail(j.appendStored(b)), j.Stored - old
}

// appendStored writes Stored, only when set (or when something of the
// tail follows it), so that a shard that does not meter writes the bytes
// it always wrote.
func (j *Job) appendStored(b []byte) []byte {
	if j.Stored == 0 && j.tail() == tailNone {
		return b
	}
	return binary.AppendVarint(b, j.Stored)
}

// What comes after Stored, each part written only when it or a later one
// is set: a job without any writes the bytes it wrote before they
// existed.
const (
	tailNone   = iota
	tailKeys   // a keyed job's concurrency and fairness keys
	tailTrace  // a traced job's trace context
	tailSchema // the schema versions its payloads were checked against
)

func (j *Job) tail() int {
	switch {
	case j.Schema != nil:
		return tailSchema
	case j.Trace != nil:
		return tailTrace
	case j.Keyed():
		return tailKeys
	}
	return tailNone
}

// appendTail ends the record with what comes after Stored: the keys
// (written empty when a later part follows), the trace context (empty
// likewise), then the schema versions.
func (j *Job) appendTail(b []byte) []byte {
	t := j.tail()
	if t == tailNone {
		return b
	}
	b = putStr(putStr(b, j.ConcurrencyKey()), j.FairnessKey())
	if t == tailKeys {
		return b
	}
	b = putStr(putStr(b, j.TraceParent()), j.TraceState())
	if t == tailTrace {
		return b
	}
	b = binary.AppendUvarint(b, uint64(j.Schema.Version))
	b = binary.AppendUvarint(b, uint64(len(j.Schema.Steps)))
	for _, v := range j.Schema.Steps {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b
}

// keysLen is how many bytes appendTail writes.
func (j *Job) keysLen() int {
	t := j.tail()
	if t == tailNone {
		return 0
	}
	n := strLen(j.ConcurrencyKey()) + strLen(j.FairnessKey())
	if t >= tailTrace {
		n += strLen(j.TraceParent()) + strLen(j.TraceState())
	}
	if t == tailSchema {
		n += uvarintLen(int(j.Schema.Version)) + uvarintLen(len(j.Schema.Steps))
		for _, v := range j.Schema.Steps {
			n += uvarintLen(int(v))
		}
	}
	return n
}

func strLen(s string) int { return uvarintLen(len(s)) + len(s) }

func uvarintLen(n int) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutUvarint(buf[:], uint64(n))
}

func (j *Job) appendFields(b []byte) []byte {
	b = append(b, recordVersion)
	b = putStr(b, j.ID)
	b = putStr(b, j.Queue)
	b = putBytes(b, j.Payload)
	b = append(b, byte(j.State), byte(j.Priority))
	for _, v := range []int64{int64(j.Attempt), int64(j.MaxRetries)} {
		b = binary.AppendVarint(b, v)
	}
	b = putStr(b, j.Backoff)
	for _, v := range []int64{j.BaseDelay, j.MaxDelay, j.CreatedAt, j.ScheduledAt, j.StartedAt, j.CompletedAt,
		j.FailedAt, j.NextAttempt, j.LeaseUntil, j.LeaseNs, j.ExpireAfter, j.ExpireAt} {
		b = binary.AppendVarint(b, v)
	}
	b = putStr(b, j.UniqueKey)
	b = binary.AppendVarint(b, j.UniqueUntil)
	b = binary.AppendUvarint(b, uint64(len(j.Tags)))
	for _, k := range sortedKeys(j.Tags) {
		b = putStr(b, k)
		b = putStr(b, j.Tags[k])
	}
	b = putBytes(b, j.Progress)
	b = putBytes(b, j.Checkpoint)
	b = putBytes(b, j.Result)
	b = binary.AppendUvarint(b, uint64(len(j.Errors)))
	for _, e := range j.Errors {
		b = binary.AppendVarint(b, int64(e.Attempt))
		b = putStr(b, e.Error)
		b = putStr(b, e.Backtrace)
		b = binary.AppendVarint(b, e.At)
	}
	b = putStr(b, j.WorkerID)
	b = putStr(b, j.Hostname)
	b = putStr(b, j.DeadReason)
	b = binary.AppendVarint(b, j.UpdatedAt)
	for _, v := range []int64{j.CancelRequestedAt, j.CancelledAt, j.DeadAt, j.PruneAt} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(j.Timeline)))
	for _, e := range j.Timeline {
		b = binary.AppendVarint(b, e.At)
		b = append(b, byte(e.Kind))
		b = putStr(b, e.Detail)
	}
	b = putStr(b, j.BatchID)
	b = putStr(b, j.ChainID)
	b = binary.AppendVarint(b, int64(j.ChainStep))
	b = putBytes(b, j.Chain)
	b = append(b, byte(j.Flow))
	b = binary.AppendUvarint(b, uint64(len(j.DependsOn)))
	for _, id := range j.DependsOn {
		b = putStr(b, id)
	}
	b = binary.AppendVarint(b, int64(j.DepsLeft))
	b = putStr(b, j.CancelReason)
	b = binary.AppendVarint(b, j.OwnLeaseNs)
	return b
}

// Decode reads a stored record into j.
func (j *Job) Decode(b []byte) (err error) {
	if len(b) == 0 || b[0] != recordVersion {
		return fmt.Errorf("job: unknown record version")
	}
	d := decoder{b: b[1:]}
	defer func() {
		if r := recover(); r != nil {
			if r != errShort {
				panic(r)
			}
			err = fmt.Errorf("job: truncated record")
		}
	}()
	j.ID = d.str()
	j.Queue = d.str()
	j.Payload = d.bytes()
	j.State, j.Priority = State(d.byte()), Priority(d.byte())
	j.Attempt, j.MaxRetries = int(d.varint()), int(d.varint())
	j.Backoff = d.str()
	for _, p := range []*int64{&j.BaseDelay, &j.MaxDelay, &j.CreatedAt, &j.ScheduledAt, &j.StartedAt, &j.CompletedAt,
		&j.FailedAt, &j.NextAttempt, &j.LeaseUntil, &j.LeaseNs, &j.ExpireAfter, &j.ExpireAt} {
		*p = d.varint()
	}
	j.UniqueKey = d.str()
	j.UniqueUntil = d.varint()
	if n := d.count(); n > 0 {
		j.Tags = make(map[string]string, n)
		for i := 0; i < n; i++ {
			k := d.str()
			j.Tags[k] = d.str()
		}
	}
	j.Progress = d.bytes()
	j.Checkpoint = d.bytes()
	j.Result = d.bytes()
	if n := d.count(); n > 0 {
		j.Errors = make([]AttemptError, n)
		for i := range j.Errors {
			j.Errors[i] = AttemptError{Attempt: int(d.varint()), Error: d.str(), Backtrace: d.str(), At: d.varint()}
		}
	}
	j.WorkerID = d.str()
	j.Hostname = d.str()
	j.DeadReason = d.str()
	j.UpdatedAt = d.varint()
	for _, p := range []*int64{&j.CancelRequestedAt, &j.CancelledAt, &j.DeadAt, &j.PruneAt} {
		*p = d.varint()
	}
	if n := d.count(); n > 0 {
		j.Timeline = make([]Event, n)
		for i := range j.Timeline {
			j.Timeline[i] = Event{At: d.varint(), Kind: EventKind(d.byte())}
			j.Timeline[i].Detail = d.str()
		}
	}
	j.BatchID = d.str()
	j.ChainID = d.str()
	j.ChainStep = int(d.varint())
	j.Chain = d.bytes()
	j.Flow = Flow(d.byte())
	if n := d.count(); n > 0 {
		j.DependsOn = make([]string, n)
		for i := range j.DependsOn {
			j.DependsOn[i] = d.str()
		}
	}
	j.DepsLeft = int(d.varint())
	j.CancelReason = d.str()
	j.OwnLeaseNs = d.varint()
	j.Stored = d.varint()
	j.SetKeys(d.str(), d.str())
	j.SetTrace(d.str(), d.str())
	if len(d.b) > 0 {
		j.Schema = &Schema{Version: uint32(d.uvarint())}
		if n := d.count(); n > 0 {
			j.Schema.Steps = make([]uint32, n)
			for i := range j.Schema.Steps {
				j.Schema.Steps[i] = uint32(d.uvarint())
			}
		}
	}
	return nil
}

// PayloadOf returns the payload of a stored record without decoding the
// rest, for scans that judge jobs by payload alone. The result aliases b.
func PayloadOf(b []byte) (p []byte, err error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, fmt.Errorf("job: unknown record version")
	}
	d := decoder{b: b[1:]}
	defer func() {
		if r := recover(); r != nil {
			if r != errShort {
				panic(r)
			}
			p, err = nil, fmt.Errorf("job: truncated record")
		}
	}()
	d.skip() // id
	d.skip() // queue
	n := d.count()
	if n > len(d.b) {
		panic(errShort)
	}
	return d.b[:n:n], nil
}

func putStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func putBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

var errShort = errors.New("short")

// decoder reads fields; past the end of the record every field is zero.
type decoder struct{ b []byte }

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint() int64 {
	if len(d.b) == 0 {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		panic(errShort)
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if len(d.b) == 0 {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		panic(errShort)
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) count() int {
	if len(d.b) == 0 {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)) {
		panic(errShort)
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if n == 0 {
		return nil
	}
	if n > len(d.b) {
		panic(errShort)
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *decoder) skip() {
	n := d.count()
	if n > len(d.b) {
		panic(errShort)
	}
	d.b = d.b[n:]
}

func (d *decoder) str() string {
	n := d.count()
	if n > len(d.b) {
		panic(errShort)
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
