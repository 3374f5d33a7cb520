package state

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's audit log at control: the records of the requests control
// serves (tenant administration) and of those a gateway refused before
// any shard saw them, written by the gateway right after it answered
// (AppendAuditCmd), in time order (layout.Audit), trimmed by the leader
// past the plan's audit_retention_days (TrimAuditCmd). A namespace's job
// and queue requests are recorded by its shard instead.

// AppendAuditCmd records one request of TenantID. Record's ID, Time and
// KeyName are the apply's: the entry's time and place, and the key's
// name as the state knows it then (so a deleted key's records keep it).
type AppendAuditCmd struct {
	TenantID      string           `json:"tenant_id"`
	Record        wire.AuditRecord `json:"record"`
	RetentionDays int64            `json:"retention_days,omitempty"`
}

// TrimAuditCmd deletes TenantID's records older than Before (unix ns).
type TrimAuditCmd struct {
	TenantID string `json:"tenant_id"`
	Before   int64  `json:"before"`
}

func applyAppendAudit(tx *replica.Tx, c *AppendAuditCmd) (replica.None, error) {
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return replica.None{}, businessErr(err)
	}
	if d := c.RetentionDays; d != 0 && (d < wire.MinAuditRetentionDays || d > wire.MaxAuditRetentionDays) {
		return replica.None{}, apierr.Field("retention_days", "retention_days must be from %d to %d, not %d",
			wire.MinAuditRetentionDays, wire.MaxAuditRetentionDays, d)
	}
	rec := c.Record
	rec.ID, rec.Time, rec.KeyName = "", time.Time{}, ""
	if k, err := LoadKey(tx, c.TenantID, rec.KeyID); err == nil {
		rec.KeyName = k.Name
	}
	at := tx.Now.UnixNano()
	first := layout.Audit(c.TenantID, at, tx.Index, 0)
	pos := uint16(0)
	if last, ok := lastKeyIn(tx, first, layout.PrefixEnd(first[:len(first)-2])); ok {
		_, _, p, _ := layout.AuditPlace(c.TenantID, last)
		pos = p + 1
	}
	mustSetJSON(tx, layout.Audit(c.TenantID, at, tx.Index, pos), rec)
	if c.RetentionDays != 0 && AuditRetentionDays(tx, c.TenantID) != c.RetentionDays {
		mustSet(tx, layout.AuditRetention(c.TenantID), layout.Uint64(uint64(c.RetentionDays)))
	}
	return replica.None{}, nil
}

func applyTrimAudit(tx *replica.Tx, c *TrimAuditCmd) (int, error) {
	if c.Before <= 0 {
		return 0, nil
	}
	if err := tx.DeleteRange(layout.Audits(c.TenantID), layout.AuditAt(c.TenantID, c.Before), nil); err != nil {
		panic(err)
	}
	return 1, nil
}

// AuditRetentionDays is the days tid's plan keeps its records, as its
// gateway last said, or the default.
func AuditRetentionDays(r pebble.Reader, tid string) int64 {
	v, closer, err := r.Get(layout.AuditRetention(tid))
	if err != nil {
		return wire.DefaultAuditRetentionDays
	}
	defer closer.Close()
	if d := layout.DecodeUint64(v); d > 0 {
		return int64(d)
	}
	return wire.DefaultAuditRetentionDays
}

// AuditTrims are the trims the leader proposes at now: one per tenant
// with records past its retention.
func AuditTrims(r pebble.Reader, now time.Time) []TrimAuditCmd {
	var out []TrimAuditCmd
	it := must(r.NewIter(&pebble.IterOptions{LowerBound: layout.AllAudits(), UpperBound: layout.PrefixEnd(layout.AllAudits())}))
	defer it.Close()
	for ok := it.First(); ok; {
		k := it.Key()
		tid, _, _ := strings.Cut(string(k[1:]), "\x00")
		before := now.UnixNano() - AuditRetentionDays(r, tid)*int64(24*time.Hour)
		if at, _, _, isRec := layout.AuditPlace(tid, k); isRec && at < before {
			out = append(out, TrimAuditCmd{TenantID: tid, Before: before})
		}
		ok = it.SeekGE(layout.PrefixEnd(layout.Audits(tid)))
	}
	return out
}

// ReadAudit is a page of tid's records that pass f, oldest first, after
// the record whose place is after ("" from the start), reading at most
// scan records.
func ReadAudit(r pebble.Reader, tid string, f *wire.AuditFilter, after string, limit, scan int) (*wire.AuditPage, error) {
	lower := layout.AuditAt(tid, f.From.UnixNano())
	if f.From.IsZero() {
		lower = layout.Audits(tid)
	}
	if after != "" {
		at, idx, pos, err := parseAuditPlace(after)
		if err != nil {
			return nil, apierr.Field("after", "%v", err)
		}
		if k := append(layout.Audit(tid, at, idx, pos), 0); string(k) > string(lower) {
			lower = k
		}
	}
	upper := layout.PrefixEnd(layout.Audits(tid))
	if !f.To.IsZero() {
		upper = layout.AuditAt(tid, f.To.UnixNano())
	}
	it := must(r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}))
	defer it.Close()
	out := &wire.AuditPage{Records: []wire.AuditRecord{}}
	for ok := it.First(); ok; ok = it.Next() {
		at, idx, pos, isRec := layout.AuditPlace(tid, it.Key())
		if !isRec {
			continue
		}
		if len(out.Records) >= limit || scan <= 0 {
			return out, nil
		}
		scan--
		place := fmt.Sprintf("%d.%d.%d", at, idx, pos)
		out.Cursor = place
		var rec wire.AuditRecord
		if json.Unmarshal(it.Value(), &rec) != nil {
			continue
		}
		rec.ID, rec.Time = "t:"+place, time.Unix(0, at).UTC()
		if f.Match(&rec) {
			out.Records = append(out.Records, rec)
		}
	}
	out.Cursor = "" // the range's end: no more
	return out, nil
}

func parseAuditPlace(s string) (at int64, idx uint64, pos uint16, err error) {
	parts := strings.Split(s, ".")
	if len(parts) == 3 {
		a, e1 := strconv.ParseInt(parts[0], 10, 64)
		i, e2 := strconv.ParseUint(parts[1], 10, 64)
		p, e3 := strconv.ParseUint(parts[2], 10, 16)
		if e1 == nil && e2 == nil && e3 == nil && a > 0 {
			return a, i, uint16(p), nil
		}
	}
	return 0, 0, 0, fmt.Errorf("not a cursor of this log: %q", s)
}

// lastKeyIn is the last key in [lower, upper), if any.
func lastKeyIn(r pebble.Reader, lower, upper []byte) ([]byte, bool) {
	it := must(r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}))
	defer it.Close()
	if !it.Last() {
		return nil, false
	}
	return append([]byte(nil), it.Key()...), true
}
