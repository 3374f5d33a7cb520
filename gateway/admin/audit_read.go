package admin

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The two logs GET /api/v1/audit merges, each read one page at a time in
// the cursor's order: forward with its own reader, or newest first
// through newestPage.

// shardAudit is a page of namespace ns's records from its shard (none
// once its log is done, or while no node of a self-hosted shard joined).
func (a *Admin) shardAudit(r *admitted.Request, ns string, f *wire.AuditFilter, cur *auditCursor, limit int, unjoined bool) (*wire.AuditPage, error) {
	if cur.ShardDone || unjoined {
		return &wire.AuditPage{}, nil
	}
	read := func(from, to time.Time, after string, n int) (*wire.AuditPage, error) {
		q := auditQuery(f, from, to, after, n)
		q.Del("namespace")
		var p wire.AuditPage
		if err := a.proxy.ShardCall(r, ns, http.MethodGet, "/api/v1/audit?"+q.Encode(), auditShardTimeout, nil, http.StatusOK, &p); err != nil {
			return nil, err
		}
		for i := range p.Records {
			p.Records[i].Namespace = ns // the tenant's name of it, not the shard's
		}
		return &p, nil
	}
	return a.readLog(read, f, cur.Desc, cur.Shard, &cur.ShardWidth, limit)
}

// controlAudit is a page of the tenant's records at control that the key
// may read (auditable).
func (a *Admin) controlAudit(r *admitted.Request, f *wire.AuditFilter, cur *auditCursor, limit int) (*wire.AuditPage, error) {
	if cur.CtrlDone {
		return &wire.AuditPage{}, nil
	}
	read := func(from, to time.Time, after string, n int) (*wire.AuditPage, error) {
		p, err := a.control.Audit(a.ctx, r.RequestID, r.Key.TenantID, auditQuery(f, from, to, after, n))
		if err != nil {
			return nil, a.tell(r, err)
		}
		p.Records = a.auditable(r, p.Records)
		return &p, nil
	}
	return a.readLog(read, f, cur.Desc, cur.Control, &cur.CtrlWidth, limit)
}

// readLog reads a page of one log from its place in the cursor; newest
// first, width is the log's window in the cursor, set to its next page's.
func (a *Admin) readLog(read auditRead, f *wire.AuditFilter, desc bool, place string, width *time.Duration, limit int) (*wire.AuditPage, error) {
	if !desc {
		return read(f.From, f.To, place, limit)
	}
	if _, ok := parseAuditPlace(place); place != "" && !ok {
		return nil, apierr.Field("cursor", "cursor is not one of this log's pages")
	}
	p, w, err := newestPage(read, f.From, f.To, place, *width, limit, time.Now())
	*width = w
	return p, err
}

// auditQuery is f's query with its time range [from, to) (zero: open),
// a log's place after, and a page's size.
func auditQuery(f *wire.AuditFilter, from, to time.Time, after string, limit int) url.Values {
	g := *f
	g.From, g.To = from, to
	q := g.Query()
	q.Set("limit", strconv.Itoa(limit))
	if after != "" {
		q.Set("after", after)
	}
	return q
}
