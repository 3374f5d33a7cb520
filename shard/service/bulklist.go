package service

import (
	"encoding/base64"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// BulkQuery selects a page of background bulk operations.
type BulkQuery struct {
	Limit  int    // 0 = wire.DefaultBulkLimit; at most wire.MaxBulkListLimit
	Cursor string // from the previous page; "" = the newest
}

// ListBulk reads a page of ns's background bulk operations visible to sc
// from local state, newest first (their ids are ULIDs, so id order is
// start order).
func (s *Service) ListBulk(ns string, sc tenancy.QueueScope, q BulkQuery) (*wire.BulkOperationList, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = wire.DefaultBulkLimit
	}
	if q.Limit < 1 || q.Limit > wire.MaxBulkListLimit {
		return nil, apierr.Field("limit", "limit must be between 1 and %d", wire.MaxBulkListLimit)
	}
	p := keys.BulkOpPrefix(ns)
	upper := keys.PrefixEnd(p)
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || !strings.HasPrefix(string(b), "bulk_") || len(b) > 64 {
			return nil, apierr.Field("cursor", "cursor is not one this server returned")
		}
		upper = keys.BulkOp(ns, string(b)) // exclusive: the last operation shown
	}
	it, err := s.node.DB().NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := &wire.BulkOperationList{Operations: []wire.BulkOperation{}}
	for ok := it.Last(); ok; ok = it.Prev() {
		var op engine.BulkOp
		must(replica.Decode(it.Value(), &op))
		if !opVisible(&op, sc) {
			continue
		}
		if len(out.Operations) == q.Limit {
			out.HasMore = true
			c := base64.RawURLEncoding.EncodeToString([]byte(out.Operations[len(out.Operations)-1].ID))
			out.Cursor = &c
			break
		}
		out.Operations = append(out.Operations, *opView(&op))
	}
	return out, nil
}
