package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/jobbie/jobbie/wire"
)

// BatchPage is a page of ListBatches: batches, newest first. Pass Cursor
// to the next call while HasMore.
type BatchPage struct {
	Batches []Batch
	Cursor  string // "" on the last page
	HasMore bool
}

// ListBatches lists the namespace's batches, newest first, until a fired
// batch is pruned with the retention period. limit is 1 to 200, or 0 for
// the server's 50; cursor is "" for the first page. A key limited to some
// queues sees only batches whose jobs and callback are all in them.
func (c *Client) ListBatches(ctx context.Context, limit int, cursor string) (*BatchPage, error) {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	path := "/api/v1/batches"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var w wire.BatchList
	if _, err := c.do(ctx, "GET", path, nil, &w); err != nil {
		return nil, err
	}
	return &BatchPage{Batches: w.Batches, Cursor: deref(w.Cursor), HasMore: w.HasMore}, nil
}
