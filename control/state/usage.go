package state

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// The metering ledger's commands. Shards count absolute meters per
// namespace and hour, so the ledger stores what a shard said last for
// Each (tenant, namespace, hour, shard): writing the same bucket again
// changes nothing, and an overlapping or repeated pull never counts twice.
// Gateways count api requests the same way per (tenant, hour, gateway
// instance). Hours travel as unix seconds of their start.

// UsageEntry is one shard's meters of one namespace in one hour.
type UsageEntry struct {
	Tenant    string           `json:"tenant"`
	Namespace string           `json:"namespace"`
	Hour      int64            `json:"hour"`
	Meters    wire.ShardMeters `json:"meters"`
}

// PutUsageCmd stores a shard's buckets, each replacing what the ledger
// had for it. The last command of a pull carries the shard's new cursor
// (Cursor, the oldest hour still open, with the shard's applied_at that
// closed the hours before it); a cursor never moves back, so a late
// command from a deposed leader cannot reopen hours.
type PutUsageCmd struct {
	Shard     string       `json:"shard"`
	Entries   []UsageEntry `json:"entries"`
	Cursor    int64        `json:"cursor,omitempty"`
	AppliedAt int64        `json:"applied_at,omitempty"` // unix nanoseconds
}

// PullCursor is where the puller resumes reading a shard: every hour
// before Hour is closed (the shard's AppliedAt was more than an hour and
// closeMargin past its start), so its buckets no longer change.
type PullCursor struct {
	Hour      time.Time `json:"hour"`
	AppliedAt time.Time `json:"applied_at"`
}

func applyPutUsage(tx *replica.Tx, c *PutUsageCmd) (replica.None, error) {
	for _, e := range c.Entries {
		mustSetJSON(tx, layout.Usage(e.Tenant, e.Namespace, UnixHour(e.Hour), c.Shard), e.Meters)
	}
	if c.Cursor == 0 {
		return replica.None{}, nil
	}
	var cur PullCursor
	must(getJSON(tx, layout.PullCursor(c.Shard), &cur))
	next := UnixHour(c.Cursor)
	if next.After(cur.Hour) {
		mustSetJSON(tx, layout.PullCursor(c.Shard), PullCursor{Hour: next, AppliedAt: time.Unix(0, c.AppliedAt).UTC()})
	}
	return replica.None{}, nil
}

// APIRequestCount is one gateway instance's count of one tenant's
// requests in one hour.
type APIRequestCount struct {
	Tenant string `json:"tenant"`
	Hour   int64  `json:"hour"`
	Count  uint64 `json:"count"`
}

// PutAPIRequestsCmd stores a gateway instance's counts. A count only
// grows while its hour lasts, so the larger of the stored and the new one
// is kept: a push that was delayed behind a later one cannot lower it.
type PutAPIRequestsCmd struct {
	Gateway string            `json:"gateway"`
	Counts  []APIRequestCount `json:"counts"`
}

func applyPutAPIRequests(tx *replica.Tx, c *PutAPIRequestsCmd) (replica.None, error) {
	for _, n := range c.Counts {
		k := layout.APIRequests(n.Tenant, UnixHour(n.Hour), c.Gateway)
		if n.Count > must(getUint64(tx, k)) {
			mustSet(tx, k, layout.Uint64(n.Count))
		}
	}
	return replica.None{}, nil
}

// UnixHour is the hour starting at unix second s, in UTC.
func UnixHour(s int64) time.Time { return time.Unix(s, 0).UTC() }

func LoadPullCursor(r pebble.Reader, shard string) (PullCursor, bool, error) {
	var c PullCursor
	ok, err := getJSON(r, layout.PullCursor(shard), &c)
	return c, ok, err
}

// LoadPullCursors is every shard's cursor, by shard id.
func LoadPullCursors(r pebble.Reader) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := scanJSON(r, layout.PullCursors(), func(k []byte, c PullCursor) { out[layout.PullCursorShard(k)] = c.Hour })
	return out, err
}

// LoadShardMeters is what the ledger holds for one bucket.
func LoadShardMeters(r pebble.Reader, tid, ns string, hour time.Time, shard string) (wire.ShardMeters, bool, error) {
	var m wire.ShardMeters
	ok, err := getJSON(r, layout.Usage(tid, ns, hour, shard), &m)
	return m, ok, err
}
