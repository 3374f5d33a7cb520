package control

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// The metering ledger's commands. Shards count absolute meters per
// namespace and hour, so the ledger stores what a shard said last for
// each (tenant, namespace, hour, shard): writing the same bucket again
// changes nothing, and an overlapping or repeated pull never counts twice.
// Gateways count api requests the same way per (tenant, hour, gateway
// instance). Hours travel as unix seconds of their start.

// usageEntry is one shard's meters of one namespace in one hour.
type usageEntry struct {
	Tenant    string           `json:"tenant"`
	Namespace string           `json:"namespace"`
	Hour      int64            `json:"hour"`
	Meters    wire.ShardMeters `json:"meters"`
}

// putUsageCmd stores a shard's buckets, each replacing what the ledger
// had for it. The last command of a pull carries the shard's new cursor
// (Cursor, the oldest hour still open, with the shard's applied_at that
// closed the hours before it); a cursor never moves back, so a late
// command from a deposed leader cannot reopen hours.
type putUsageCmd struct {
	Shard     string       `json:"shard"`
	Entries   []usageEntry `json:"entries"`
	Cursor    int64        `json:"cursor,omitempty"`
	AppliedAt int64        `json:"applied_at,omitempty"` // unix nanoseconds
}

// pullCursor is where the puller resumes reading a shard: every hour
// before Hour is closed (the shard's AppliedAt was more than an hour and
// closeMargin past its start), so its buckets no longer change.
type pullCursor struct {
	Hour      time.Time `json:"hour"`
	AppliedAt time.Time `json:"applied_at"`
}

func applyPutUsage(tx *replica.Tx, c *putUsageCmd) (replica.None, error) {
	for _, e := range c.Entries {
		mustSetJSON(tx, layout.Usage(e.Tenant, e.Namespace, unixHour(e.Hour), c.Shard), e.Meters)
	}
	if c.Cursor == 0 {
		return replica.None{}, nil
	}
	var cur pullCursor
	must(getJSON(tx, layout.PullCursor(c.Shard), &cur))
	next := unixHour(c.Cursor)
	if next.After(cur.Hour) {
		mustSetJSON(tx, layout.PullCursor(c.Shard), pullCursor{Hour: next, AppliedAt: time.Unix(0, c.AppliedAt).UTC()})
	}
	return replica.None{}, nil
}

// apiRequestCount is one gateway instance's count of one tenant's
// requests in one hour.
type apiRequestCount struct {
	Tenant string `json:"tenant"`
	Hour   int64  `json:"hour"`
	Count  uint64 `json:"count"`
}

// putAPIRequestsCmd stores a gateway instance's counts. A count only
// grows while its hour lasts, so the larger of the stored and the new one
// is kept: a push that was delayed behind a later one cannot lower it.
type putAPIRequestsCmd struct {
	Gateway string            `json:"gateway"`
	Counts  []apiRequestCount `json:"counts"`
}

func applyPutAPIRequests(tx *replica.Tx, c *putAPIRequestsCmd) (replica.None, error) {
	for _, n := range c.Counts {
		k := layout.APIRequests(n.Tenant, unixHour(n.Hour), c.Gateway)
		if n.Count > must(getUint64(tx, k)) {
			mustSet(tx, k, layout.Uint64(n.Count))
		}
	}
	return replica.None{}, nil
}

// unixHour is the hour starting at unix second s, in UTC.
func unixHour(s int64) time.Time { return time.Unix(s, 0).UTC() }

func loadPullCursor(r pebble.Reader, shard string) (pullCursor, bool, error) {
	var c pullCursor
	ok, err := getJSON(r, layout.PullCursor(shard), &c)
	return c, ok, err
}

// loadPullCursors is every shard's cursor, by shard id.
func loadPullCursors(r pebble.Reader) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := scanJSON(r, layout.PullCursors(), func(k []byte, c pullCursor) { out[layout.PullCursorShard(k)] = c.Hour })
	return out, err
}

// loadShardMeters is what the ledger holds for one bucket.
func loadShardMeters(r pebble.Reader, tid, ns string, hour time.Time, shard string) (wire.ShardMeters, bool, error) {
	var m wire.ShardMeters
	ok, err := getJSON(r, layout.Usage(tid, ns, hour, shard), &m)
	return m, ok, err
}
