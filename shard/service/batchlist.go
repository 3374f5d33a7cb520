package service

import (
	"encoding/base64"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// BatchQuery selects a page of batches.
type BatchQuery struct {
	Limit  int    // 0 = wire.DefaultBatchLimit; at most wire.MaxBatchListLimit
	Cursor string // from the previous page; "" = the newest
}

// ListBatches reads a page of ns's batches visible to sc from local
// state, newest first. Batch ids are ULIDs made by the proposer, so the
// batch records' own key order is creation order and no index is needed:
// every batch record is listed, those written before this endpoint too.
// Under a limited scope a batch with a job or a callback outside it is
// left out, as GetBatch does not find it.
func (s *Service) ListBatches(ns string, sc tenancy.QueueScope, q BatchQuery) (*wire.BatchList, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = wire.DefaultBatchLimit
	}
	if q.Limit < 1 || q.Limit > wire.MaxBatchListLimit {
		return nil, apierr.Field("limit", "limit must be between 1 and %d", wire.MaxBatchListLimit)
	}
	p := keys.Batch(ns, "")
	upper := keys.PrefixEnd(p)
	if q.Cursor != "" {
		id, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || !validBatchID(string(id)) {
			return nil, apierr.Field("cursor", "cursor is not one this server returned")
		}
		upper = keys.Batch(ns, string(id)) // exclusive: the last batch shown
	}
	db := s.node.DB()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := &wire.BatchList{Batches: []wire.Batch{}}
	for ok := it.Last(); ok; ok = it.Prev() {
		var b engine.BatchRecord
		must(replica.Decode(it.Value(), &b))
		if !s.batchInScope(ns, &b, sc) {
			continue
		}
		if len(out.Batches) == q.Limit {
			out.HasMore = true
			c := base64.RawURLEncoding.EncodeToString([]byte(out.Batches[len(out.Batches)-1].ID))
			out.Cursor = &c
			break
		}
		out.Batches = append(out.Batches, *s.batchWithCallback(db, ns, &b))
	}
	return out, nil
}

// validBatchID reports whether id has the shape of a batch id.
func validBatchID(id string) bool { return len(id) == BatchIDLen && id[:6] == "batch_" }

// batchWithCallback is b as the API shows it, with its callback job's state once
// it fired (the callback is in the caller's scope: batchInScope).
func (s *Service) batchWithCallback(r pebble.Reader, ns string, b *engine.BatchRecord) *wire.Batch {
	v := batchView(b)
	if b.CallbackJobID != "" {
		if j, err := engine.ReadJob(r, ns, b.CallbackJobID); err == nil {
			st := j.State.String()
			v.CallbackState = &st
		}
	}
	return v
}
