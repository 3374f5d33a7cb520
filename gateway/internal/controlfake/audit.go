package controlfake

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The tenants' audit logs at control: records in the order they came,
// read with the API's filters and a cursor that is a record's place.

// AuditOf is a copy of tenant tid's records at the fake control.
func (fc *Control) AuditOf(tid string) []wire.AuditRecord {
	fc.Lock()
	defer fc.Unlock()
	return clone(fc.audit[tid])
}

func (fc *Control) AppendAudit(_ context.Context, _, tid string, in wire.AuditAppendRequest) error {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	rec := clone(in.Record)
	if fc.audit == nil {
		fc.audit = map[string][]wire.AuditRecord{}
	}
	rec.ID, rec.Time = "t:"+strconv.Itoa(len(fc.audit[tid])), time.Now().UTC()
	for _, k := range fc.keys[tid] {
		if k.ID == rec.KeyID {
			rec.KeyName = k.Name
		}
	}
	fc.audit[tid] = append(fc.audit[tid], rec)
	return nil
}

func (fc *Control) Audit(_ context.Context, _, tid string, q url.Values) (wire.AuditPage, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.AuditPage{}, err
	}
	f, limit, field, err := wire.ParseAuditFilter(q.Get)
	if err != nil {
		return wire.AuditPage{}, refuse(apierr.Field(field, "%v", err))
	}
	start := 0
	if a := q.Get("after"); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil {
			return wire.AuditPage{}, refuse(apierr.Field("after", "not a cursor of this log: %q", a))
		}
		start = n + 1
	}
	out := wire.AuditPage{Records: []wire.AuditRecord{}}
	recs, last := fc.audit[tid], 0
	for i := start; i < len(recs); i++ {
		r := recs[i]
		if !f.From.IsZero() && r.Time.Before(f.From) || !f.To.IsZero() && !r.Time.Before(f.To) || !f.Match(&r) {
			continue
		}
		if len(out.Records) == limit {
			out.Cursor = strconv.Itoa(last)
			break
		}
		out.Records, last = append(out.Records, clone(r)), i
	}
	return out, nil
}
