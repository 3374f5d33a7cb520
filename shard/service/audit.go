package service

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/wire"
)

// The namespace's audit log (engine/audit.go): the API records each
// audited request's outcome here after serving it, and any node answers
// reads from its own store.

// auditScan bounds the records one read looks at, so a filter that
// matches few answers a partial page with a cursor rather than walk
// the whole log.
const auditScan = 10_000

// Audit records one audited request of ns: ac is what the gateway knew
// of it, result "ok" or its error code, status its HTTP status, objectID
// what the answer named when the path named nothing.
func (s *Service) Audit(ctx context.Context, ns string, ac *wire.AuditContext, result string, status int, objectID string) error {
	e := engine.AuditEntry{KeyID: ac.KeyID, Role: ac.Role, Action: ac.Action, Route: ac.Route, ObjectType: ac.ObjectType,
		ObjectID: ac.ObjectID, Result: result, Status: status, Source: ac.SourceAddress, RequestID: ac.RequestID}
	if e.ObjectID == "" {
		e.ObjectID = objectID
	}
	_, err := engine.AuditAppend.Propose(ctx, s.node, &engine.AuditAppendCmd{NS: ns, Entry: e, RetentionDays: ac.RetentionDays})
	return err
}

// AuditRecords is a page of ns's records that pass f, oldest first,
// after the cursor after ("" for the start; a page's Cursor).
func (s *Service) AuditRecords(ns string, f *wire.AuditFilter, after string, limit int) (*wire.AuditPage, error) {
	from, err := ParseAuditCursor(after)
	if err != nil {
		return nil, apierr.Field("after", "%v", err)
	}
	var to int64
	if !f.To.IsZero() {
		to = f.To.UnixNano()
	}
	recs, more, last := engine.ReadAudit(s.node.DB(), ns, f.From.UnixNano(), to, from, limit, auditScan, func(r *engine.AuditRecord) bool {
		v := AuditView(ns, r)
		return f.Match(&v)
	})
	out := &wire.AuditPage{Records: make([]wire.AuditRecord, 0, len(recs))}
	for i := range recs {
		out.Records = append(out.Records, AuditView(ns, &recs[i]))
	}
	if more {
		out.Cursor = AuditCursor(last)
	}
	return out, nil
}

// AuditView is a stored record as the API shows it.
func AuditView(ns string, r *engine.AuditRecord) wire.AuditRecord {
	return wire.AuditRecord{ID: "n:" + AuditCursor(*r), Time: time.Unix(0, r.At).UTC(), KeyID: r.KeyID, Role: r.Role,
		Action: r.Action, Route: r.Route, ObjectType: r.ObjectType, ObjectID: r.ObjectID, Namespace: ns,
		Result: r.Result, Status: r.Status, SourceAddress: r.Source, RequestID: r.RequestID}
}

// AuditCursor is a record's place in its log: "<time>.<index>.<pos>".
func AuditCursor(r engine.AuditRecord) string {
	return fmt.Sprintf("%d.%d.%d", r.At, r.Index, r.Pos)
}

// ParseAuditCursor reads AuditCursor's form; "" is the log's start.
func ParseAuditCursor(c string) (engine.AuditRecord, error) {
	if c == "" {
		return engine.AuditRecord{}, nil
	}
	parts := strings.Split(c, ".")
	if len(parts) == 3 {
		at, e1 := strconv.ParseInt(parts[0], 10, 64)
		idx, e2 := strconv.ParseUint(parts[1], 10, 64)
		pos, e3 := strconv.ParseUint(parts[2], 10, 16)
		if e1 == nil && e2 == nil && e3 == nil && at > 0 {
			return engine.AuditRecord{At: at, Index: idx, Pos: uint16(pos)}, nil
		}
	}
	return engine.AuditRecord{}, fmt.Errorf("not a cursor of this log: %q", c)
}
