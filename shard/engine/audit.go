package engine

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// The audit log of a namespace: one record per audited request served
// here (the gateway names the audited routes, wire.AuditHeader), written
// by AuditAppend right after the request's own command, under
// keys.Audit in time order. The leader trims each namespace's records
// older than its plan's audit_retention_days (AuditTrim, one range
// delete), as it trims the event log.
//
// The record is a command of its own rather than a part of the action's:
// a refused command leaves nothing, and most refusals (a bad field, an
// unknown job, a scope) are decided before any command, so only a
// separate record can say how every request ended, from one place (the
// API's middleware) for every route.

// AuditEntry is one record as stored (an on-disk format; its time is the
// key's).
type AuditEntry struct {
	KeyID      string `codec:"k"`
	Role       string `codec:"r"`
	Action     string `codec:"a"`
	Route      string `codec:"p"`
	ObjectType string `codec:"t"`
	ObjectID   string `codec:"o"`
	Result     string `codec:"x"`
	Status     int    `codec:"s"`
	Source     string `codec:"f"`
	RequestID  string `codec:"q"`
}

// AuditAppendCmd records one audited request of NS, and the plan's
// retention its gateway sent (days; 0 keeps what is recorded).
type AuditAppendCmd struct {
	NS            string     `codec:"n"`
	Entry         AuditEntry `codec:"e"`
	RetentionDays int64      `codec:"d"`
}

func (c *AuditAppendCmd) namespace() string { return c.NS }

// AuditTrimCmd deletes NS's audit records older than Before (unix ns).
type AuditTrimCmd struct {
	NS     string `codec:"n"`
	Before int64  `codec:"b"`
}

func (c *AuditTrimCmd) namespace() string { return c.NS }

// ValidAuditRetention checks a plan's audit retention against the plans'
// bounds; a bad one is a 400 naming the field.
func ValidAuditRetention(days int64) error {
	if days < wire.MinAuditRetentionDays || days > wire.MaxAuditRetentionDays {
		return apierr.Field("audit_retention_days", "audit_retention_days must be from %d to %d, not %d",
			wire.MinAuditRetentionDays, wire.MaxAuditRetentionDays, days)
	}
	return nil
}

// applyAuditAppend writes c's record at the entry's time, after any
// record an earlier command of the same entry wrote, and records the
// retention when it changed.
func (e *Engine) applyAuditAppend(tx *replica.Tx, c *AuditAppendCmd) (replica.None, error) {
	if c.NS == "" {
		return replica.None{}, apierr.Field("namespace", "an audit record names its namespace")
	}
	if c.RetentionDays != 0 {
		if err := ValidAuditRetention(c.RetentionDays); err != nil {
			return replica.None{}, err
		}
	}
	registerNamespace(tx, c.NS)
	at := tx.Now.UnixNano()
	pos := uint16(0)
	lower := keys.Audit(c.NS, at, tx.Index, 0)
	entry := lower[:len(lower)-2] // this entry's records
	if last, ok := lastKey(tx, lower, keys.PrefixEnd(entry)); ok {
		_, _, p, err := keys.ParseAudit(c.NS, last)
		must(err)
		pos = p + 1
	}
	must(tx.Set(keys.Audit(c.NS, at, tx.Index, pos), replica.Encode(&c.Entry), nil))
	if c.RetentionDays != 0 && AuditRetentionDays(tx, c.NS) != c.RetentionDays {
		must(tx.Set(keys.AuditRetention(c.NS), binary.AppendUvarint(nil, uint64(c.RetentionDays)), nil))
	}
	return replica.None{}, nil
}

// applyAuditTrim deletes c's records older than its bound: one range.
func (e *Engine) applyAuditTrim(tx *replica.Tx, c *AuditTrimCmd) (int, error) {
	if c.NS == "" || c.Before <= 0 {
		return 0, nil
	}
	must(tx.DeleteRange(keys.AuditPrefix(c.NS), keys.AuditAt(c.NS, c.Before), nil))
	return 1, nil
}

// AuditRetentionDays is ns's audit retention as its plan last set it, or
// the default.
func AuditRetentionDays(r pebble.Reader, ns string) int64 {
	v, closer, err := r.Get(keys.AuditRetention(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return wire.DefaultAuditRetentionDays
	}
	must(err)
	defer closer.Close()
	d, n := binary.Uvarint(v)
	if n <= 0 {
		return wire.DefaultAuditRetentionDays
	}
	return int64(d)
}

// AuditTrimPoint is the bound below which ns's records are past its
// retention at now, and whether any record lies below it.
func AuditTrimPoint(r pebble.Reader, ns string, now int64) (int64, bool) {
	before := now - AuditRetentionDays(r, ns)*int64(24*time.Hour)
	_, ok := firstKey(r, keys.AuditPrefix(ns), keys.AuditAt(ns, before))
	return before, ok
}

// lastKey is the last key in [lower, upper), if any.
func lastKey(r pebble.Reader, lower, upper []byte) ([]byte, bool) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	must(err)
	defer func() { must(it.Close()) }()
	if !it.Last() {
		return nil, false
	}
	return append([]byte(nil), it.Key()...), true
}

// AuditRecord is one stored record, read back.
type AuditRecord struct {
	At    int64
	Index uint64
	Pos   uint16
	AuditEntry
}

// ReadAudit reads up to limit of ns's records from time from (unix ns,
// inclusive) to to (exclusive; 0: no end), after the record (at, index,
// pos) of after when after.At is not zero, oldest first, those keep
// accepts only. It reads at most scan records, so a filter that matches
// few cannot make a request walk the whole log; more reports whether
// it stopped before the range's end, and last is the last record it
// read (where the next page starts after).
func ReadAudit(r pebble.Reader, ns string, from, to int64, after AuditRecord, limit, scan int, keep func(*AuditRecord) bool) (out []AuditRecord, more bool, last AuditRecord) {
	last = after
	lower := keys.AuditAt(ns, from)
	if after.At != 0 {
		if k := keys.Audit(ns, after.At, after.Index, after.Pos+1); string(k) > string(lower) {
			lower = k
			if after.Pos == ^uint16(0) {
				lower = keys.Audit(ns, after.At, after.Index+1, 0)
			}
		}
	}
	upper := keys.PrefixEnd(keys.AuditPrefix(ns))
	if to > 0 {
		upper = keys.AuditAt(ns, to)
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	must(err)
	defer func() { must(it.Close()) }()
	for ok := it.First(); ok; ok = it.Next() {
		if len(out) >= limit || scan <= 0 {
			return out, true, last
		}
		scan--
		at, idx, pos, err := keys.ParseAudit(ns, it.Key())
		if err != nil {
			continue
		}
		rec := AuditRecord{At: at, Index: idx, Pos: pos}
		last = AuditRecord{At: at, Index: idx, Pos: pos}
		if replica.Decode(it.Value(), &rec.AuditEntry) != nil {
			continue
		}
		if keep == nil || keep(&rec) {
			out = append(out, rec)
		}
	}
	return out, false, last
}
