package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Usage pages: the default and largest number of buckets of a page.
const (
	DefaultUsageLimit = 1000
	MaxUsageLimit     = 5000
)

// Usage answers GET /internal/v1/usage?since=&cursor=&limit= from this
// node's applied state (shard id left for the caller): the buckets of
// hours at or after since, truncated to the hour and at most
// engine.UsageRetention back, in (hour, namespace) order. Any node may
// answer: the counters are absolute and applied_at says how far this
// node's state goes, so a follower that lags answers less, never wrong.
func (s *Service) Usage(since, cursor, limit string) (*wire.UsagePage, error) {
	if since == "" {
		return nil, apierr.Field("since", "since is required: the first hour to read, RFC 3339 (e.g. 2026-11-24T13:00:00Z)")
	}
	from, err := time.Parse(time.RFC3339, since)
	if err != nil {
		return nil, apierr.Field("since", "since must be an RFC 3339 time (e.g. 2026-11-24T13:00:00Z), not %q", since)
	}
	from = from.UTC().Truncate(time.Hour)
	if oldest := s.cfg.Clock.Now().UTC().Truncate(time.Hour).Add(-engine.UsageRetention); from.Before(oldest) {
		return nil, apierr.Field("since", "since may go back %s at most, to %s: older hours are no longer kept",
			engine.UsageRetention, oldest.Format(time.RFC3339))
	}
	n := DefaultUsageLimit
	if limit != "" {
		if n, err = strconv.Atoi(limit); err != nil || n < 1 || n > MaxUsageLimit {
			return nil, apierr.Field("limit", "limit must be a whole number from 1 to %d, not %q", MaxUsageLimit, limit)
		}
	}
	start := keys.UsageBucket(from.UnixNano(), "")
	if cursor != "" {
		k, err := base64.RawURLEncoding.DecodeString(cursor)
		k = append(keys.UsageBucketPrefix(), k...)
		if _, _, perr := keys.ParseUsageBucket(k); err != nil || perr != nil {
			return nil, apierr.Field("cursor", "cursor is not one this endpoint gave")
		}
		if bytes.Compare(k, start) > 0 {
			start = k
		}
	}
	db := s.node.DB()
	// applied_at first: the buckets read after it are at least that
	// current, so what it says is closed is in them.
	out := &wire.UsagePage{AppliedAt: s.eng.UsageAppliedAt(db)}
	var next []byte
	out.Buckets, next = engine.UsageBuckets(db, start, n)
	if next != nil {
		c := base64.RawURLEncoding.EncodeToString(next[len(keys.UsageBucketPrefix()):])
		out.Cursor = &c
	}
	return out, nil
}

// meter makes sure the shard meters usage, keeps its event log (all
// its switches) and its queue history (the leader's loop proposes the
// same) before
// it creates a job: on a shard that never did, the first enqueue proposes
// the usage sweep that starts metering and the command that starts the
// event log (the leader's loop does too, at its first tick), so no job of
// a new shard goes uncounted and no change of it goes unlogged.
func (s *Service) meter(ctx context.Context) error {
	if !s.eng.EventLogDetailed(s.node.DB()) {
		if _, err := engine.EventLogStartDetailed.Propose(ctx, s.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !s.eng.EventLogCounted(s.node.DB()) {
		if _, err := engine.EventLogStartCounted.Propose(ctx, s.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !s.eng.EventLogBlocks(s.node.DB()) {
		if _, err := engine.EventLogStartBlocks.Propose(ctx, s.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !s.eng.EventLogKept(s.node.DB()) {
		if _, err := engine.EventLogStartKept.Propose(ctx, s.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !s.eng.HistoryOn(s.node.DB()) {
		if _, err := engine.HistoryStart.Propose(ctx, s.node, &engine.HistoryStartCmd{}); err != nil {
			return err
		}
	}
	if s.eng.Metering(s.node.DB()) {
		return nil
	}
	_, err := engine.UsageSweep.Propose(ctx, s.node, &engine.UsageSweepCmd{})
	return err
}
