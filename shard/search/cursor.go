package search

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"hash/fnv"
	"sort"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// Results are ordered by (sort value, job id), both in the request's
// order. The id makes the order total, so keyset paging ("the jobs after
// this (value, id)") neither skips nor repeats a job between pages, even
// while jobs are inserted: a new job lands either before the cursor (and
// is not shown) or after it (and is shown once). A job whose sort value
// changes between pages (updated_at, say) can of course move across the
// cursor; that is inherent to paging over live data.

// SortValue is j's value for sort key s. Unset times are 0. priority maps
// critical to 2, high to 1 and normal to 0, so desc (the default) lists
// the most urgent first. An unknown key sorts by created_at.
func SortValue(j *job.Job, s string) int64 {
	switch s {
	case wire.SortUpdatedAt:
		return j.UpdatedAt
	case wire.SortScheduledAt:
		return j.ScheduledAt
	case wire.SortStartedAt:
		return j.StartedAt
	case wire.SortCompletedAt:
		return j.CompletedAt
	case wire.SortPriority:
		return int64(job.Normal) - int64(j.Priority)
	case wire.SortAttempt:
		return int64(j.Attempt)
	}
	return j.CreatedAt
}

// Before reports whether a is listed before b for sort key s in order
// ("asc" or "desc"; anything else is desc, the default).
func Before(a, b *job.Job, s, order string) bool {
	return follows(SortValue(b, s), b.ID, SortValue(a, s), a.ID, order)
}

// AfterCursor reports whether j is listed strictly after the cursor
// position, that is, whether it belongs to a later page.
func AfterCursor(j *job.Job, c Cursor, s, order string) bool {
	return follows(SortValue(j, s), j.ID, c.Value, c.ID, order)
}

// follows reports whether (v, id) comes strictly after (cv, cid).
func follows(v int64, id string, cv int64, cid string, order string) bool {
	if order == wire.OrderAsc {
		return v > cv || v == cv && id > cid
	}
	return v < cv || v == cv && id < cid
}

// Cursor is a position in a result list: the sort value and id of the
// last job of a page.
type Cursor struct {
	Value int64
	ID    string
}

const (
	cursorVersion = 1
	maxCursorID   = 128
)

// EncodeCursor makes the opaque cursor string for c: base64url of
// version, fingerprint, value, id and a CRC-32 of all of them. The
// fingerprint ties it to one search (Request.Fingerprint); the checksum
// catches a truncated or edited cursor. It is not a secret: a cursor only
// positions a search the caller could run anyway.
func EncodeCursor(c Cursor, fingerprint uint64) string {
	b := make([]byte, 0, 1+8+binary.MaxVarintLen64*2+len(c.ID)+4)
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, fingerprint)
	b = binary.AppendVarint(b, c.Value)
	b = binary.AppendUvarint(b, uint64(len(c.ID)))
	b = append(b, c.ID...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a cursor made by EncodeCursor and checks that it
// belongs to the search with this fingerprint. Errors are 400s on field
// "cursor".
func DecodeCursor(s string, fingerprint uint64) (Cursor, error) {
	malformed := func() (Cursor, error) {
		return Cursor{}, fieldErr("cursor", "malformed cursor; pass the cursor of the previous page unchanged")
	}
	if len(s) > maxCursorChars {
		return malformed()
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+8+1+1+4 || b[0] != cursorVersion {
		return malformed()
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return malformed()
	}
	fp := binary.BigEndian.Uint64(body[1:9])
	rest := body[9:]
	v, n := binary.Varint(rest)
	if n <= 0 {
		return malformed()
	}
	rest = rest[n:]
	l, n := binary.Uvarint(rest)
	if n <= 0 || l > maxCursorID || uint64(len(rest)-n) != l {
		return malformed()
	}
	if fp != fingerprint {
		return Cursor{}, fieldErr("cursor", "does not belong to this search: it was made for another filter, sort or order")
	}
	return Cursor{Value: v, ID: string(rest[n:])}, nil
}

// Fingerprint identifies the search's filter, sort and order (not its
// limit or cursor, so a client may change the page size between pages).
// It is FNV-64a over a canonical encoding: field order, tag order and
// state order do not matter.
func (r *Request) Fingerprint() uint64 {
	h := fnv.New64a()
	var buf []byte
	str := func(tag byte, s string) {
		buf = append(buf, tag)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	num := func(tag byte, v int64) {
		buf = append(buf, tag)
		buf = binary.AppendVarint(buf, v)
	}
	f := &r.Filter
	buf = append(buf, 'J', 1) // encoding version
	str('s', r.Sort)
	str('o', r.Order)
	str('q', f.Queue)
	var states uint32
	for _, s := range f.States {
		states |= 1 << s
	}
	num('S', int64(states))
	if f.Priority != nil {
		num('p', int64(*f.Priority))
	}
	keys := make([]string, 0, len(f.Tags))
	for k := range f.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	num('t', int64(len(keys)))
	for _, k := range keys {
		str('k', k)
		str('v', f.Tags[k])
	}
	str('c', f.PayloadContains)
	str('j', f.PayloadJQ)
	for i, t := range f.timeFields() {
		if t.r.After != nil {
			num(byte(0x10+i), *t.r.After)
		}
		if t.r.Before != nil {
			num(byte(0x20+i), *t.r.Before)
		}
	}
	str('w', f.WorkerID)
	if f.HasErrors != nil {
		num('e', map[bool]int64{false: 0, true: 1}[*f.HasErrors])
	}
	str('E', f.ErrorContains)
	str('b', f.BatchID)
	str('u', f.UniqueKey)
	str('c', f.ConcurrencyKey)
	str('f', f.FairnessKey)
	if f.AttemptMin != nil {
		num('m', int64(*f.AttemptMin))
	}
	if f.AttemptMax != nil {
		num('M', int64(*f.AttemptMax))
	}
	str('i', f.JobIDPrefix)
	if f.ByHold() { // only then, so the cursors of other searches stay as they were
		str('h', f.HeldReason)
		str('H', f.HeldBudget)
	}
	h.Write(buf)
	return h.Sum64()
}
