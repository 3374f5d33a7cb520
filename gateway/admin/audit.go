package admin

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// GET /api/v1/audit (docs/api/audit.md): a page of the tenant's audit
// log, two logs merged by time under one cursor: the namespace's, kept by
// its shard (its job, queue, schedule and webhook requests), and the
// tenant's at control (tenant administration, and what gateways refused
// before a shard saw it). The namespace is the `namespace` filter's, else
// the request's; control's records are every namespace's unless the
// filter names one.

// auditShardTimeout bounds the read of a namespace's records.
const auditShardTimeout = 10 * time.Second

// auditCursor is where a page ended in each log; a log done has nothing
// left after the page. Opaque to clients (base64url of its JSON).
type auditCursor struct {
	NS        string `json:"n"`
	Shard     string `json:"s,omitempty"`
	Control   string `json:"c,omitempty"`
	ShardDone bool   `json:"sd,omitempty"`
	CtrlDone  bool   `json:"cd,omitempty"`
	// Desc: pages newest first, each log's place the one its next page
	// reads before (audit_newest.go).
	Desc bool `json:"d,omitempty"`
	// ShardWidth and CtrlWidth: the time window each log's next page
	// newest first starts with.
	ShardWidth time.Duration `json:"sw,omitempty"`
	CtrlWidth  time.Duration `json:"cw,omitempty"`
}

// Audit answers a page of records, as JSON (wire.AuditPage) or, with
// format=jsonl, as JSON lines with the next page's cursor in the
// Jobbie-Cursor header.
func (a *Admin) Audit(c *fiber.Ctx, r *admitted.Request) error {
	f, limit, field, err := wire.ParseAuditFilter(func(k string) string { return c.Query(k) })
	if err != nil {
		return apierr.Field(field, "%v", err)
	}
	format := c.Query("format", "json")
	if format != "json" && format != "jsonl" {
		return apierr.Field("format", "format must be json or jsonl, not %q", format)
	}
	ns := r.NS
	if f.Namespace != "" {
		if err := tenancy.ValidateNamespace(f.Namespace); err != nil {
			return apierr.Field("namespace", "%v", err)
		}
		if !r.Key.AllowsNamespace(f.Namespace) {
			return namespaceNotFound(f.Namespace)
		}
		ns = strings.Clone(f.Namespace)
		if err := a.gate.AuthorizeIn(r, ns, tenancy.ActAuditRead); err != nil {
			return err
		}
	}
	order := c.Query("order", "asc")
	if order != "asc" && order != "desc" {
		return apierr.Field("order", "order must be asc (oldest first) or desc (newest first), not %q", order)
	}
	cur := auditCursor{NS: ns, Desc: order == "desc"}
	if s := c.Query("cursor"); s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || json.Unmarshal(raw, &cur) != nil || cur.NS != ns || cur.Desc != (order == "desc") {
			return apierr.Field("cursor", "cursor is not one of this log's (the same namespace filter and order) pages")
		}
	}
	place, err := a.namespace(r, ns) // 404 for a namespace the tenant does not have
	if err != nil {
		return err
	}
	var shard, ctrl *wire.AuditPage
	if shard, err = a.shardAudit(r, ns, &f, &cur, limit, place.Unjoined); err != nil {
		return err
	}
	if ctrl, err = a.controlAudit(r, &f, &cur, limit); err != nil {
		return err
	}
	page := mergeAudit(cur, shard, ctrl, limit, place.Unjoined)
	a.keyNames(r, page.Records)
	if format == "jsonl" {
		c.Set(fiber.HeaderContentType, "application/x-ndjson")
		if page.Cursor != "" {
			c.Set("Jobbie-Cursor", page.Cursor)
		}
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			enc := json.NewEncoder(w)
			for i := range page.Records {
				_ = enc.Encode(&page.Records[i])
			}
		})
		return nil
	}
	return c.JSON(page)
}

// mergeAudit takes the first limit records of two logs' pages in the
// cursor's order (oldest first, the shard's first at equal times; newest
// first, exactly the reverse) and the cursor that resumes both after
// them: a log whose page was taken whole resumes where its page said
// (done when it said nothing), else after its last record taken.
func mergeAudit(cur auditCursor, shard, ctrl *wire.AuditPage, limit int, noShard bool) wire.AuditPage {
	out := wire.AuditPage{Records: make([]wire.AuditRecord, 0, min(limit, len(shard.Records)+len(ctrl.Records)))}
	shardFirst := func(s, c time.Time) bool { return !s.After(c) }
	if cur.Desc {
		shardFirst = func(s, c time.Time) bool { return s.After(c) }
	}
	i, j := 0, 0
	for len(out.Records) < limit && (i < len(shard.Records) || j < len(ctrl.Records)) {
		if j >= len(ctrl.Records) || i < len(shard.Records) && shardFirst(shard.Records[i].Time, ctrl.Records[j].Time) {
			out.Records, i = append(out.Records, shard.Records[i]), i+1
		} else {
			out.Records, j = append(out.Records, ctrl.Records[j]), j+1
		}
	}
	next := cur
	if !cur.ShardDone {
		if i == len(shard.Records) {
			next.Shard, next.ShardDone = shard.Cursor, shard.Cursor == "" || noShard
		} else if i > 0 {
			next.Shard = strings.TrimPrefix(shard.Records[i-1].ID, "n:")
		}
	}
	if !cur.CtrlDone {
		if j == len(ctrl.Records) {
			next.Control, next.CtrlDone = ctrl.Cursor, ctrl.Cursor == ""
		} else if j > 0 {
			next.Control = strings.TrimPrefix(ctrl.Records[j-1].ID, "t:")
		}
	}
	if !next.ShardDone || !next.CtrlDone {
		raw, _ := json.Marshal(next)
		out.Cursor = base64.RawURLEncoding.EncodeToString(raw)
	}
	return out
}

// auditable keeps the records of control's log the key may read: those
// of a namespace it may use and read the audit log of, and the tenant's
// own (no namespace: keys, roles, backups…) only for a key of every
// namespace. A key scoped to some namespaces (a custom role's, say)
// learns nothing of the others. The page's cursor still passes the
// records dropped, so the next page does not read them again.
func (a *Admin) auditable(r *admitted.Request, recs []wire.AuditRecord) []wire.AuditRecord {
	allowed := map[string]bool{}
	may := func(ns string) bool {
		ok, seen := allowed[ns]
		if !seen {
			name := ns
			if ns == "" {
				name = tenancy.AllNamespaces
			}
			ok = r.Key.AllowsNamespace(name)
			if ok {
				check := ns
				if ns == "" {
					check = r.NS
				}
				ok, _ = a.gate.AllowedIn(r, check, tenancy.ActAuditRead)
			}
			allowed[ns] = ok
		}
		return ok
	}
	out := recs[:0]
	for _, rec := range recs {
		if may(rec.Namespace) {
			out = append(out, rec)
		}
	}
	return out
}

// keyNames fills in the names of the keys the shard's records name, from
// control's list (a key deleted since keeps its id alone); control's own
// records carry theirs.
func (a *Admin) keyNames(r *admitted.Request, recs []wire.AuditRecord) {
	need := false
	for i := range recs {
		need = need || recs[i].KeyName == ""
	}
	if !need {
		return
	}
	keys, err := a.control.ListKeys(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return // the records stand without names
	}
	names := make(map[string]string, len(keys.Keys))
	for _, k := range keys.Keys {
		names[k.ID] = k.Name
	}
	for i := range recs {
		if recs[i].KeyName == "" {
			recs[i].KeyName = names[recs[i].KeyID]
		}
	}
}
