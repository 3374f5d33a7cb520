package engine

import (
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// UsageSweepCmd is the leader's periodic usage sweep. The first one turns
// metering on; each integrates every namespace's stored bytes up to the
// entry's clock (so an idle namespace accrues, and an hour that ended is
// complete), and prunes the buckets of hours past UsageRetention.
type UsageSweepCmd struct{}

// usageClock is the metering clock record: when metering started and the
// clock of the last usage sweep, through which every namespace's storage
// is integrated.
type usageClock struct {
	onSince, swept int64
}

func readUsageClock(r pebble.Reader) (usageClock, bool) {
	v, closer, err := r.Get(keys.UsageClock())
	if errors.Is(err, pebble.ErrNotFound) {
		return usageClock{}, false
	}
	must(err)
	defer closer.Close()
	on, swept := decodePair(v)
	return usageClock{onSince: on, swept: swept}, true
}

func (e *Engine) applyUsageSweep(tx *replica.Tx, _ *UsageSweepCmd) (replica.None, error) {
	u := e.usage
	now := tx.Now.UnixNano()
	tx.MarkDirty()
	if !u.metering(tx) {
		u.state, u.onSince = usageOn, now
		tx.AfterCommit(func() { u.live.Store(true) })
	}
	// Every gauge in the state, and those this batch made, up to now.
	p := keys.UsageGaugePrefix()
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	for ok := it.First(); ok; ok = it.Next() {
		u.gauge(tx, keys.UsageGaugeNamespace(it.Key()))
	}
	must(it.Close())
	for ns, g := range u.gauges { // each touches only its own rows: any order gives the same state
		u.integrate(tx, ns, g, now)
	}
	e.pruneUsage(tx, hourOf(now)-int64(UsageRetention))
	must(tx.Set(keys.UsageClock(), appendPair(nil, u.onSince, now), nil))
	u.at = max(u.at, now)
	tx.AfterCommit(func() { u.publish(now) })
	return replica.None{}, nil
}

// pruneUsage deletes the buckets of hours before cutoff, and forgets them.
func (e *Engine) pruneUsage(tx *replica.Tx, cutoff int64) {
	u := e.usage
	if cutoff <= 0 {
		return // a clock in 1970: nothing is that old, and the key would wrap
	}
	lower, upper := keys.UsageBucketPrefix(), keys.UsageBucket(cutoff, "")
	if _, ok := firstKey(tx, lower, upper); ok {
		must(tx.DeleteRange(lower, upper, nil))
	}
	kept := u.dirty[:0]
	for _, r := range u.dirty {
		if r.hour >= cutoff {
			kept = append(kept, r)
		}
	}
	u.dirty = kept
	for k := range u.rows {
		if k.hour < cutoff {
			delete(u.rows, k)
		}
	}
	u.last = nil
}

// Metering reports whether the committed state meters usage (safe from
// any goroutine; r is the node's store).
func (e *Engine) Metering(r pebble.Reader) bool {
	if e.usage.live.Load() {
		return true
	}
	_, ok := readUsageClock(r)
	if ok {
		e.usage.live.Store(true)
	}
	return ok
}

// UsageAppliedAt is the time through which r's usage buckets are complete
// (wire.UsagePage.AppliedAt): the clock of the last entry that changed
// them or swept, held back to the last usage sweep while an hour has
// ended that the sweep has not yet integrated every namespace's storage
// through. Zero while the shard does not meter. Safe from any goroutine.
func (e *Engine) UsageAppliedAt(r pebble.Reader) time.Time {
	c, ok := readUsageClock(r)
	if !ok {
		return time.Time{}
	}
	at := max(e.usage.applied.Load(), c.swept)
	if hourOf(at) > hourOf(c.swept) {
		at = c.swept
	}
	return time.Unix(0, at).UTC()
}

// UsageBuckets reads up to limit buckets of r from key from on, in (hour,
// namespace) order; next is the key after the last one read when more
// remain, else nil.
func UsageBuckets(r pebble.Reader, from []byte, limit int) (out []wire.UsageBucket, next []byte) {
	p := keys.UsageBucketPrefix()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer func() { must(it.Close()) }()
	out = []wire.UsageBucket{}
	for ok := it.First(); ok; ok = it.Next() {
		hour, ns, err := keys.ParseUsageBucket(it.Key())
		must(err)
		if len(out) == limit {
			return out, append([]byte(nil), it.Key()...)
		}
		m := decodeMeters(it.Value())
		out = append(out, wire.UsageBucket{Namespace: ns, Hour: time.Unix(0, hour).UTC(), Meters: wire.ShardMeters{
			JobsEnqueued: m[mEnqueued], Executions: m[mExecutions], JobsCompleted: m[mCompleted], JobsFailed: m[mFailed],
			JobsDead: m[mDead], ActiveJobMs: m[mActiveMs], StorageByteMs: m[mStorageByteMs],
			PushDeliveries: m[mPushDeliveries], WebhookDeliveries: m[mWebhookDeliveries],
			AIInputTokens: m[mAIInput], AIOutputTokens: m[mAIOutput], AICacheReadTokens: m[mAICacheRead],
			AICacheWriteTokens: m[mAICacheWrite], AICostNanos: m[mAICostNanos],
		}})
	}
	return out, nil
}
