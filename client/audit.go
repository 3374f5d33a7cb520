package client

import (
	"context"
	"errors"
	"iter"
	"strconv"

	"github.com/jobbie/jobbie/wire"
)

// The audit log (docs/api/audit.md): who did what to the tenant's
// things and how it ended, read with audit.read.

// AuditRecord is one audited request; it never holds a secret.
type AuditRecord = wire.AuditRecord

// AuditPage is one page of records, oldest first (newest first for a
// query with Newest); Cursor "" means there is no more.
type AuditPage = wire.AuditPage

// AuditQuery selects records: the filters of wire.AuditFilter (each
// empty for any; From inclusive, To exclusive), Limit records a page
// (0: the server's default, wire.DefaultAuditLimit; at most
// wire.MaxAuditLimit) and Cursor, the previous page's. Newest reads
// newest first (order=desc); a cursor goes on in the order that gave it.
type AuditQuery struct {
	wire.AuditFilter
	Limit  int
	Cursor string
	Newest bool
}

// Audit reads one page of the audit log. A page may hold fewer records
// than Limit and still carry a cursor (the server bounds how far one
// page reads); follow it with AuditAll.
func (c *Client) Audit(ctx context.Context, q AuditQuery) (*AuditPage, error) {
	v := q.Query()
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.Newest {
		v.Set("order", "desc")
	}
	path := "/api/v1/audit"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out AuditPage
	if _, err := c.do(ctx, "GET", path, nil, &out); err != nil {
		return nil, err
	}
	if out.Records == nil {
		out.Records = []AuditRecord{}
	}
	return &out, nil
}

// errAuditLoop stops a walk the server would send round in a circle.
var errAuditLoop = errors.New("jobbie: audit: the server answered the same cursor it was given")

// AuditAll yields every record q selects, oldest first (newest first
// with q.Newest), following
// cursors from q.Cursor on (q.Limit is the page size), until there is no
// more, the caller stops ranging, or an error (yielded last, with a zero
// record).
func (c *Client) AuditAll(ctx context.Context, q AuditQuery) iter.Seq2[AuditRecord, error] {
	return func(yield func(AuditRecord, error) bool) {
		for {
			page, err := c.Audit(ctx, q)
			if err != nil {
				yield(AuditRecord{}, err)
				return
			}
			for _, r := range page.Records {
				if !yield(r, nil) {
					return
				}
			}
			if page.Cursor == "" {
				return
			}
			if page.Cursor == q.Cursor {
				yield(AuditRecord{}, errAuditLoop)
				return
			}
			q.Cursor = page.Cursor
		}
	}
}
