package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Queue history: per queue, minute buckets for HistoryMinutes and hour
// buckets for HistoryHours of what happened (jobs enqueued, completed,
// failed, dead; the processing times of attempts that ended by an ack or
// a fail) and of what the leader sampled (pending depth, oldest pending
// age). The counts are added by the apply that changes the job, in the
// bucket of the entry's leader-stamped clock, to the minute and to the
// hour at once (the roll-up); each touched bucket is written once per
// Raft batch. The samples come by one HistorySample per namespace and
// interval; the last of a bucket is its value. HistoryTrim, which the
// leader proposes, deletes what is older than each resolution keeps.
//
// History starts with HistoryStart (108): a log written before it
// replays as it first applied, and a node that does not know the command
// stops instead of diverging.

// What each resolution keeps.
const (
	HistoryMinutes = 48 * time.Hour
	HistoryHours   = 30 * 24 * time.Hour
)

// HistBins is the number of processing-time bins: four per doubling of
// microseconds (histBin), so a percentile read from them is within 12.5%
// of the true value above 4 µs.
const HistBins = 252

// Bucket is one history bucket of a queue.
type Bucket struct {
	Start                             int64 // unix ns
	Enqueued, Completed, Failed, Dead int64
	SampledAt                         int64 // when depth and age were last sampled in it (0: never)
	Depth                             int64 // pending jobs at the sample
	OldestAge                         int64 // ns: age of the oldest pending job at the sample
	Hist                              [HistBins]int64

	dirty bool        // changed in this batch (historyCache)
	since *replica.Tx // the entry that first changed it in this batch
}

// histBin is the bin of a processing time of us microseconds: 0..3 are
// exact; above, four bins per power of two, by the two bits after the
// leading one. Integer arithmetic only, so every member agrees.
func histBin(us int64) int {
	if us < 4 {
		return int(max(us, 0))
	}
	l := bits.Len64(uint64(us))
	return 4*(l-2) + int((us>>(l-3))&3)
}

// histMid is the middle of bin b, in microseconds.
func histMid(b int) float64 {
	if b < 4 {
		return float64(b)
	}
	l, sub := b/4+2, b%4
	lo := float64(int64(4+sub) << (l - 3))
	return lo + float64(int64(1)<<(l-3))/2
}

// Percentile is the processing time (µs) at or below which a fraction p
// of the bucket's attempts ended, from its bins (0 without attempts).
func (b *Bucket) Percentile(p float64) float64 {
	var total int64
	for _, n := range b.Hist {
		total += n
	}
	if total == 0 {
		return 0
	}
	want := int64(p*float64(total) + 0.999999)
	var seen int64
	for i, n := range b.Hist {
		if seen += n; seen >= max(want, 1) {
			return histMid(i)
		}
	}
	return histMid(HistBins - 1)
}

// encodeBucket is a bucket's value: a version byte, the counts and the
// sample as uvarints, then the non-empty bins as (bin, count) pairs.
func encodeBucket(b []byte, k *Bucket) []byte {
	b = append(b, 1)
	for _, v := range []int64{k.Enqueued, k.Completed, k.Failed, k.Dead, k.SampledAt, k.Depth, k.OldestAge} {
		b = binary.AppendUvarint(b, uint64(max(v, 0)))
	}
	for i, n := range k.Hist {
		if n > 0 {
			b = binary.AppendUvarint(b, uint64(i))
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return b
}

func decodeBucket(v []byte, start int64) (*Bucket, error) {
	if len(v) == 0 || v[0] != 1 {
		return nil, fmt.Errorf("engine: history bucket: unknown version")
	}
	k, v := &Bucket{Start: start}, v[1:]
	next := func() (int64, bool) {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return 0, false
		}
		v = v[n:]
		return int64(x), true
	}
	for _, p := range []*int64{&k.Enqueued, &k.Completed, &k.Failed, &k.Dead, &k.SampledAt, &k.Depth, &k.OldestAge} {
		x, ok := next()
		if !ok {
			return nil, fmt.Errorf("engine: history bucket: truncated")
		}
		*p = x
	}
	for len(v) > 0 {
		i, ok1 := next()
		n, ok2 := next()
		if !ok1 || !ok2 || i >= HistBins {
			return nil, fmt.Errorf("engine: history bucket: bad bin")
		}
		k.Hist[i] = n
	}
	return k, nil
}

type bucketKey struct {
	ns, queue string
	res       byte
	start     int64
}

// historyCache holds the buckets of the current minute and hour that
// entries touched: read from the state once, changed in memory, and each
// bucket a batch changed written once before it commits (flush). Buckets
// of earlier minutes and hours are dropped at the flush after their time
// passed (entries' clocks never go back); a purge or a restore drops what
// it deletes (forgetRange), and Engine.reset drops everything.
type historyCache struct {
	state    int8 // usageUnknown until read from the start record
	buckets  map[bucketKey]*Bucket
	dirty    []bucketKey // changed in this batch, in the order first changed
	flushing bool
	at       int64 // the latest entry clock that touched a bucket
	swept    int64 // the minute whose earlier buckets flush last dropped

	live atomic.Bool // history is on in the committed state (Engine.HistoryOn)
}

func newHistoryCache() *historyCache { return &historyCache{buckets: map[bucketKey]*Bucket{}} }

func (h *historyCache) reset() {
	h.state, h.buckets, h.dirty, h.flushing, h.at, h.swept = usageUnknown, map[bucketKey]*Bucket{}, nil, false, 0, 0
}

// on reports whether the state keeps history.
func (h *historyCache) on(r pebble.Reader) bool {
	if h.state == usageUnknown {
		h.state = usageOff
		if _, closer, err := r.Get(keys.HistoryStart()); err == nil {
			closer.Close()
			h.state = usageOn
		} else if !errors.Is(err, pebble.ErrNotFound) {
			must(err)
		}
	}
	return h.state == usageOn
}

// bucketsAt returns queue's minute and hour buckets of the time at,
// loaded, and marks them for writing before the batch commits.
func (h *historyCache) bucketsAt(tx *replica.Tx, ns, queue string, at int64) (minute, hour *Bucket) {
	h.at = max(h.at, at)
	return h.bucket(tx, bucketKey{ns, queue, keys.HistoryMinute, at - at%int64(time.Minute)}),
		h.bucket(tx, bucketKey{ns, queue, keys.HistoryHour, at - at%int64(time.Hour)})
}

func (h *historyCache) bucket(tx *replica.Tx, k bucketKey) *Bucket {
	tx.MarkDirty()
	b := h.buckets[k]
	if b == nil {
		b = &Bucket{Start: k.start}
		v, closer, err := tx.Get(keys.History(k.ns, k.queue, k.res, k.start))
		if err == nil {
			b, err = decodeBucket(v, k.start)
			closer.Close()
			must(err)
		} else if !errors.Is(err, pebble.ErrNotFound) {
			must(err)
		}
		h.buckets[k] = b
	}
	if !b.dirty {
		b.dirty, b.since = true, tx
		h.dirty = append(h.dirty, k)
	}
	if !h.flushing {
		h.flushing = true
		tx.BeforeCommit(func() { h.flush(tx) })
	}
	return b
}

// flush writes every bucket this batch changed, once, and drops the
// buckets of minutes and hours before the latest entry's.
func (h *historyCache) flush(tx *replica.Tx) {
	h.writeHeld(tx, nil)
	h.flushing = false
	minute := h.at - h.at%int64(time.Minute)
	if minute == h.swept {
		return
	}
	h.swept = minute
	for k := range h.buckets {
		if k.start < minute && (k.res == keys.HistoryMinute || k.start < h.at-h.at%int64(time.Hour)) {
			delete(h.buckets, k)
		}
	}
}

// writeHeld writes the buckets this batch changed but those entry keep
// changed first, which stay held (held.go).
func (h *historyCache) writeHeld(tx, keep *replica.Tx) {
	var buf []byte
	kept := h.dirty[:0]
	for _, k := range h.dirty {
		b := h.buckets[k]
		if keep != nil && b.since == keep {
			kept = append(kept, k)
			continue
		}
		buf = encodeBucket(buf[:0], b)
		must(tx.Set(keys.History(k.ns, k.queue, k.res, k.start), buf, nil))
		b.dirty, b.since = false, nil
	}
	h.dirty = kept
}

// settle writes what this batch changed now and drops ns's buckets, before
// a restore's or a move's records are written over them: a bucket changed
// earlier in the batch is written first, as it would be had its entry been
// in a batch of its own, and the next change reads what the records left.
func (h *historyCache) settle(tx *replica.Tx, ns string) {
	h.flush(tx)
	for k := range h.buckets {
		if k.ns == ns {
			delete(h.buckets, k)
		}
	}
}

// forgetRange drops the buckets of ns with keys in [lower, upper), which
// a purge step or a restore just deleted: a change to one earlier in the
// batch goes with it.
func (h *historyCache) forgetRange(ns string, lower, upper []byte) {
	gone := func(k bucketKey) bool {
		bk := keys.History(k.ns, k.queue, k.res, k.start)
		return k.ns == ns && bytes.Compare(bk, lower) >= 0 && bytes.Compare(bk, upper) < 0
	}
	kept := h.dirty[:0]
	for _, k := range h.dirty {
		if !gone(k) {
			kept = append(kept, k)
		}
	}
	h.dirty = kept
	for k := range h.buckets {
		if gone(k) {
			delete(h.buckets, k)
		}
	}
}

// addHistory applies f to queue's minute and hour buckets at the entry's clock.
func (e *Engine) addHistory(tx *replica.Tx, ns, queue string, f func(b *Bucket)) {
	if !e.history.on(tx) {
		return
	}
	m, h := e.history.bucketsAt(tx, ns, queue, tx.Now.UnixNano())
	f(m)
	f(h)
}

// historyObserver counts what a state change adds to the queue's history:
// a job created, completed (with its attempt's processing time) or dead.
// A failed attempt counts in failAttempt.
func (e *Engine) historyObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	switch {
	case from == 0:
		e.addHistory(tx, ns, j.Queue, func(b *Bucket) { b.Enqueued++ })
	case j.State == job.Completed && from == job.Active:
		bin := e.attemptBin(tx, j)
		e.addHistory(tx, ns, j.Queue, func(b *Bucket) { b.Completed++; b.Hist[bin]++ })
	case j.State == job.Completed:
		e.addHistory(tx, ns, j.Queue, func(b *Bucket) { b.Completed++ })
	}
	if j.State == job.Dead {
		e.addHistory(tx, ns, j.Queue, func(b *Bucket) { b.Dead++ })
	}
}

// historyFailed counts a failed attempt of active j (failAttempt).
func (e *Engine) historyFailed(tx *replica.Tx, ns string, j *job.Job) {
	bin := e.attemptBin(tx, j)
	e.addHistory(tx, ns, j.Queue, func(b *Bucket) { b.Failed++; b.Hist[bin]++ })
}

// attemptBin is the processing-time bin of active j's attempt ending now.
func (e *Engine) attemptBin(tx *replica.Tx, j *job.Job) int {
	if j.StartedAt == 0 {
		return 0
	}
	return histBin((tx.Now.UnixNano() - j.StartedAt) / int64(time.Microsecond))
}
