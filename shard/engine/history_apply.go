package engine

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// HistoryStartCmd switches queue history on (HistoryStart).
type HistoryStartCmd struct{}

// QueueSample is what the leader saw of one queue: its pending jobs and
// the creation time of the oldest (0: none pending).
type QueueSample struct {
	Queue    string `codec:"q"`
	Depth    int64  `codec:"d"`
	OldestAt int64  `codec:"o,omitempty"`
}

// HistorySampleCmd records the leader's samples of a namespace's queues
// in their current buckets (HistorySample).
type HistorySampleCmd struct {
	NS      string        `codec:"ns"`
	Samples []QueueSample `codec:"s"`
}

// HistoryTrimCmd deletes a namespace's history buckets older than each
// resolution keeps, as of the entry's clock (HistoryTrim).
type HistoryTrimCmd struct {
	NS string `codec:"ns"`
}

func (c *HistorySampleCmd) namespace() string { return c.NS }
func (c *HistoryTrimCmd) namespace() string   { return c.NS }

// HistoryOn reports whether r's state keeps queue history (any
// goroutine): once it has seen it on, without reading r again.
func (e *Engine) HistoryOn(r pebble.Reader) bool {
	if e.history.live.Load() {
		return true
	}
	_, closer, err := r.Get(keys.HistoryStart())
	if err != nil {
		return false
	}
	closer.Close()
	e.history.live.Store(true)
	return true
}

func (e *Engine) applyHistoryStart(tx *replica.Tx, _ *HistoryStartCmd) (replica.None, error) {
	if e.history.on(tx) {
		return replica.None{}, nil
	}
	tx.MarkDirty()
	e.history.state = usageOn
	must(tx.Set(keys.HistoryStart(), []byte{1}, nil))
	return replica.None{}, nil
}

// applyHistorySample sets each sampled queue's depth and oldest age in
// its minute and hour buckets of the entry's clock; a later sample in the
// same bucket replaces an earlier one, so a bucket holds the last.
func (e *Engine) applyHistorySample(tx *replica.Tx, c *HistorySampleCmd) (replica.None, error) {
	now := tx.Now.UnixNano()
	for _, s := range c.Samples {
		if s.Queue == "" {
			continue
		}
		var age int64
		if s.OldestAt > 0 && now > s.OldestAt {
			age = now - s.OldestAt
		}
		e.addHistory(tx, c.NS, s.Queue, func(b *Bucket) { b.SampledAt, b.Depth, b.OldestAge = now, max(s.Depth, 0), age })
	}
	return replica.None{}, nil
}

// applyHistoryTrim deletes, for every queue with history in the
// namespace, its minute buckets older than HistoryMinutes and its hour
// buckets older than HistoryHours: one seek per queue and two range
// deletes. The number of queues it deleted from.
func (e *Engine) applyHistoryTrim(tx *replica.Tx, c *HistoryTrimCmd) (int, error) {
	if !e.history.on(tx) || c.NS == "" {
		return 0, nil
	}
	// The buckets earlier entries of this batch changed are written
	// first, as they would be had each entry been a batch of its own: the
	// trim deletes what is stored, and a bucket written after it would
	// come back, on a member that grouped the entries so and on no other.
	tx.MarkDirty()
	e.history.flush(tx)
	now := tx.Now.UnixNano()
	minFloor := now - now%int64(time.Minute) - int64(HistoryMinutes)
	hourFloor := now - now%int64(time.Hour) - int64(HistoryHours)
	n := 0
	for _, q := range historyQueues(tx, c.NS) {
		must(tx.DeleteRange(keys.HistorySeries(c.NS, q, keys.HistoryMinute), keys.History(c.NS, q, keys.HistoryMinute, max(minFloor, 0)), nil))
		must(tx.DeleteRange(keys.HistorySeries(c.NS, q, keys.HistoryHour), keys.History(c.NS, q, keys.HistoryHour, max(hourFloor, 0)), nil))
		n++
	}
	return n, nil
}

// historyQueues lists the queues with history buckets in ns, one seek
// each past the last's buckets.
func historyQueues(r pebble.Reader, ns string) []string {
	p := keys.HistoryPrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	var out []string
	for ok := it.First(); ok; {
		q, _, _, err := keys.ParseHistory(ns, it.Key())
		if err != nil {
			ok = it.Next()
			continue
		}
		out = append(out, q)
		ok = it.SeekGE(keys.PrefixEnd(append(append(p[:len(p):len(p)], q...), 0)))
	}
	return out
}

// ReadHistory reads queue's buckets of resolution res that start in
// [from, to), oldest first, from r (any goroutine).
func ReadHistory(r pebble.Reader, ns, queue string, res byte, from, to int64) ([]*Bucket, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: keys.History(ns, queue, res, max(from, 0)), UpperBound: keys.History(ns, queue, res, max(to, 0))})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []*Bucket
	for ok := it.First(); ok; ok = it.Next() {
		_, _, start, err := keys.ParseHistory(ns, it.Key())
		if err != nil {
			return nil, err
		}
		b, err := decodeBucket(it.Value(), start)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
