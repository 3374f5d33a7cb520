package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Usage metering: each namespace's meters (wire.ShardMeters) per UTC hour
// of the entry's clock, changed by the apply that changes the job, so
// they are exact on every replica and survive failover and restarts.
// Each rule counts in one place:
//
//	jobs_enqueued    a job is created (insertJob): usageObserver, from 0
//	executions       a fetch leases a job: usageObserver, to active; a
//	                 lease released unused in the hour it started is taken
//	                 back (applyRelease: unleased)
//	jobs_completed   usageObserver, to completed
//	jobs_failed      a fail call or a lease expiry: failAttempt
//	jobs_dead        usageObserver, to dead
//	active_job_ms    an attempt ends (attemptEnded): its job leaves active
//	                 (usageObserver) or goes while active (removeJob)
//	storage_byte_ms  the namespace's stored-bytes gauge (job records:
//	                 putJob, deleteJobRecord), integrated over the entries'
//	                 clocks whenever it changes and by every usage sweep
//	push_deliveries  a push delivery's attempt settled by the handler's
//	                 answer: an ack or a fail by the dispatcher's worker
//	                 (AckPush, FailPush, AckBatchPush: pushDelivered)
//	webhook_deliveries  webhook delivery attempts the leader made, as
//	                 its progress records them (WebhookProgressMetered)
//
// Metering starts with the first usage sweep (UsageSweep, usage_apply.go):
// a log written before it replays as it first applied, and a node that
// does not know the command stops instead of diverging.
//
// Changes collect in memory and each touched bucket and gauge is written
// once per Raft batch (usageCache.flush), not once per job. Every change is
// made at its own entry's clock, so the state does not depend on how
// entries are grouped into batches.

// UsageRetention is how long usage buckets are kept: the usage sweep
// prunes older hours, and nothing is metered into them.
const UsageRetention = 40 * 24 * time.Hour

const hourNs = int64(time.Hour)

// The meters, in their on-disk order (encodeMeters).
const (
	mEnqueued = iota
	mExecutions
	mCompleted
	mFailed
	mDead
	mActiveMs
	mStorageByteMs
	mPushDeliveries
	mWebhookDeliveries
	// AI usage reported by workers (aiusage.go): tokens, and cost in
	// nano-dollars.
	mAIInput
	mAIOutput
	mAICacheRead
	mAICacheWrite
	mAICostNanos
	nMeters
)

// mFirstMeters is how many meters a bucket held before the delivery
// meters: encodeMeters writes at least these, and the rest only up to
// the last that is not zero, so a bucket without deliveries has the
// bytes a node without those meters writes.
const mFirstMeters = mPushDeliveries

// meterRow is one namespace's meters in one hour, as stored plus what
// this batch added.
type meterRow struct {
	ns    string
	hour  int64
	m     [nMeters]int64
	dirty bool
}

type rowKey struct {
	ns   string
	hour int64
}

// gauge is a namespace's stored bytes and the time (unix ns) through which
// they are integrated into its buckets.
type gauge struct {
	bytes, since int64
	dirty        bool
}

// usageCache is the FSM goroutine's view of the usage state: rows and
// gauges loaded or changed, written back by flush. Only applied and
// live are read from other goroutines.
type usageCache struct {
	state    int8  // usageUnknown until read from the clock record
	onSince  int64 // when metering started
	rows     map[rowKey]*meterRow
	rowsFrom int64     // no row of rows is of an hour before this one
	last     *meterRow // the row most recently used: a batch mostly meters one namespace in one hour
	gauges   map[string]*gauge
	lastG    *gauge // the gauge most recently used, of namespace lastNS
	lastNS   string
	dirty    []*meterRow
	dirtyG   []string
	flushing bool  // flush is registered for this batch
	at       int64 // the latest entry clock that changed usage, published at commit

	applied atomic.Int64 // the latest entry clock of a committed change or sweep
	live    atomic.Bool  // metering is on in the committed state
}

const (
	usageUnknown int8 = iota
	usageOff
	usageOn
)

func newUsageCache() *usageCache {
	return &usageCache{rows: map[rowKey]*meterRow{}, gauges: map[string]*gauge{}}
}

// reset drops what the cache holds (Engine.reset); what was published stays.
func (u *usageCache) reset() {
	u.state, u.onSince = usageUnknown, 0
	u.rows, u.rowsFrom, u.last, u.gauges, u.lastG = map[rowKey]*meterRow{}, 0, nil, map[string]*gauge{}, nil
	u.dirty, u.dirtyG, u.flushing, u.at = nil, nil, false, 0
}

// metering reports whether the state meters usage.
func (u *usageCache) metering(r pebble.Reader) bool {
	if u.state == usageUnknown {
		u.state = usageOff
		if c, ok := readUsageClock(r); ok {
			u.state, u.onSince = usageOn, c.onSince
			u.live.Store(true)
		}
	}
	return u.state == usageOn
}

func hourOf(t int64) int64 { return t - t%hourNs }

// ms is t in whole milliseconds: differences of ms add up exactly across
// the hour boundaries an interval is split at.
func ms(t int64) int64 { return t / int64(time.Millisecond) }

// row returns ns's meters of hour, loading them from the state.
func (u *usageCache) row(tx *replica.Tx, ns string, hour int64) *meterRow {
	if r := u.last; r != nil && r.hour == hour && r.ns == ns {
		return r
	}
	k := rowKey{ns, hour}
	r, ok := u.rows[k]
	if !ok {
		r = &meterRow{ns: ns, hour: hour}
		v, closer, err := tx.Get(keys.UsageBucket(hour, ns))
		if err == nil {
			r.m = decodeMeters(v)
			closer.Close()
		} else if !errors.Is(err, pebble.ErrNotFound) {
			must(err)
		}
		u.rows[k] = r
	}
	u.last = r
	return r
}

// add adds n to meter of ns in the hour of at.
func (u *usageCache) add(tx *replica.Tx, ns string, at int64, meter int, n int64) {
	r := u.row(tx, ns, hourOf(at))
	r.m[meter] += n
	u.touch(tx, r, nil, "")
}

// touch marks a row or a gauge for writing before the batch commits. The
// change lives in memory until then, so the command is marked dirty (as
// queueCache.touch does).
func (u *usageCache) touch(tx *replica.Tx, r *meterRow, g *gauge, ns string) {
	tx.MarkDirty()
	if r != nil && !r.dirty {
		r.dirty = true
		u.dirty = append(u.dirty, r)
	}
	if g != nil && !g.dirty {
		g.dirty = true
		u.dirtyG = append(u.dirtyG, ns)
	}
	u.at = max(u.at, tx.Now.UnixNano())
	if !u.flushing {
		u.flushing = true
		tx.BeforeCommit(func() { u.flush(tx) })
	}
}

// gauge returns ns's stored-bytes gauge, loading it from the state.
func (u *usageCache) gauge(tx *replica.Tx, ns string) *gauge {
	if g := u.lastG; g != nil && u.lastNS == ns {
		return g
	}
	if g := u.gauges[ns]; g != nil {
		u.lastG, u.lastNS = g, ns
		return g
	}
	g := &gauge{}
	if v, closer, err := tx.Get(keys.UsageGauge(ns)); err == nil {
		g.bytes, g.since = decodePair(v)
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		must(err)
	}
	u.gauges[ns] = g
	u.lastG, u.lastNS = g, ns
	return g
}

// integrate adds g's bytes × the time from g.since to to into ns's
// buckets, split at hour boundaries, and moves g.since to to. Hours past
// UsageRetention are left out: the sweep prunes them.
func (u *usageCache) integrate(tx *replica.Tx, ns string, g *gauge, to int64) {
	from := g.since
	if to <= from {
		return
	}
	g.since = to
	u.touch(tx, nil, g, ns)
	if g.bytes == 0 {
		return
	}
	from = max(from, hourOf(to)-int64(UsageRetention))
	for from < to {
		h := hourOf(from)
		end := min(h+hourNs, to)
		r := u.row(tx, ns, h)
		r.m[mStorageByteMs] += g.bytes * (ms(end) - ms(from))
		u.touch(tx, r, nil, "")
		from = end
	}
}

// flush writes every row and gauge changed in this batch, once.
func (u *usageCache) flush(tx *replica.Tx) {
	var buf []byte
	for _, r := range u.dirty {
		buf = encodeMeters(buf[:0], &r.m)
		must(tx.Set(keys.UsageBucket(r.hour, r.ns), buf, nil))
		r.dirty = false
	}
	for _, ns := range u.dirtyG {
		g := u.gauges[ns]
		g.dirty = false
		if g.bytes == 0 {
			// Nothing stored integrates to nothing: no record needed.
			must(tx.Delete(keys.UsageGauge(ns), nil))
			delete(u.gauges, ns)
			u.lastG = nil
			continue
		}
		buf = appendPair(buf[:0], g.bytes, g.since)
		must(tx.Set(keys.UsageGauge(ns), buf, nil))
	}
	u.dirty, u.dirtyG, u.flushing = u.dirty[:0], u.dirtyG[:0], false
	// Rows of past hours change rarely after their hour: once an hour,
	// keep the cache to the current one.
	if cur := hourOf(u.at); cur > u.rowsFrom {
		for k := range u.rows {
			if k.hour < cur {
				delete(u.rows, k)
			}
		}
		u.rowsFrom, u.last = cur, nil
	}
	at := u.at
	tx.AfterCommit(func() { u.publish(at) })
}

// publish records, once committed, that usage is known through at.
func (u *usageCache) publish(at int64) {
	if at > u.applied.Load() {
		u.applied.Store(at)
	}
}

// usageObserver counts the meters a state change decides.
func (e *Engine) usageObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	u := e.usage
	if !u.metering(tx) {
		return
	}
	now := tx.Now.UnixNano()
	switch from {
	case 0:
		u.add(tx, ns, now, mEnqueued, 1)
	case job.Active:
		e.attemptEnded(tx, ns, j)
	}
	switch j.State {
	case job.Active:
		u.add(tx, ns, now, mExecutions, 1)
	case job.Completed:
		u.add(tx, ns, now, mCompleted, 1)
	case job.Dead:
		u.add(tx, ns, now, mDead, 1)
	}
}

// attemptEnded adds the time active j's attempt ran to active_job_ms.
func (e *Engine) attemptEnded(tx *replica.Tx, ns string, j *job.Job) {
	u := e.usage
	if !u.metering(tx) || j.StartedAt == 0 {
		return
	}
	now := tx.Now.UnixNano()
	u.add(tx, ns, now, mActiveMs, max(ms(now)-ms(j.StartedAt), 0))
}

// failAttempt records that active j's attempt failed at now (a fail call
// or a lease expiry): its error and FailedAt, jobs_failed and the queue's
// history.
func (e *Engine) failAttempt(tx *replica.Tx, ns string, j *job.Job, now int64, msg, backtrace string) {
	e.historyFailed(tx, ns, j)
	j.Errors = append(j.Errors, job.AttemptError{Attempt: j.Attempt, Error: msg, Backtrace: backtrace, At: now})
	j.FailedAt = now
	if e.usage.metering(tx) {
		e.usage.add(tx, ns, now, mFailed, 1)
	}
}

// unleased takes back the execution and the active time of a lease that
// is released before its worker had the job (its attempt does not count),
// when it is released in the hour it started, after metering started: an
// earlier hour may already have been read as closed.
func (e *Engine) unleased(tx *replica.Tx, ns string, j *job.Job) {
	u := e.usage
	now := tx.Now.UnixNano()
	if !u.metering(tx) || hourOf(j.StartedAt) != hourOf(now) || j.StartedAt < u.onSince {
		return
	}
	u.add(tx, ns, now, mExecutions, -1)
	u.add(tx, ns, now, mActiveMs, -max(ms(now)-ms(j.StartedAt), 0)) // what usageObserver adds as the job leaves active
}

// pushDelivered counts a push delivery's settled attempt: the settling
// command came from the dispatcher's worker of the job's queue.
func (e *Engine) pushDelivered(tx *replica.Tx, ns, workerID, queue string) {
	if workerID == PushWorker(queue) && e.usage.metering(tx) {
		e.usage.add(tx, ns, tx.Now.UnixNano(), mPushDeliveries, 1)
	}
}

// webhookDelivered counts n webhook delivery attempts.
func (e *Engine) webhookDelivered(tx *replica.Tx, ns string, n int) {
	if n > 0 && e.usage.metering(tx) {
		e.usage.add(tx, ns, tx.Now.UnixNano(), mWebhookDeliveries, int64(n))
	}
}

// storedDelta changes ns's stored bytes by delta at the entry's clock,
// first integrating what it held until then.
func (e *Engine) storedDelta(tx *replica.Tx, ns string, delta int64) {
	if delta == 0 {
		return
	}
	u := e.usage
	g := u.gauge(tx, ns)
	u.integrate(tx, ns, g, tx.Now.UnixNano())
	g.bytes += delta
	u.touch(tx, nil, g, ns)
}

// encodeMeters appends m as signed varints in meter order, the meters
// after mFirstMeters only up to the last that is not zero; a record that
// ends early reads the rest as zero.
func encodeMeters(b []byte, m *[nMeters]int64) []byte {
	n := nMeters
	for n > mFirstMeters && m[n-1] == 0 {
		n--
	}
	for _, v := range m[:n] {
		b = binary.AppendVarint(b, v)
	}
	return b
}

func decodeMeters(b []byte) (m [nMeters]int64) {
	for i := range m {
		v, n := binary.Varint(b)
		if n <= 0 {
			if len(b) == 0 {
				break
			}
			panic(fmt.Sprintf("shard: corrupt usage bucket %x", b))
		}
		m[i], b = v, b[n:]
	}
	return m
}

func appendPair(b []byte, x, y int64) []byte {
	return binary.AppendVarint(binary.AppendVarint(b, x), y)
}

func decodePair(b []byte) (x, y int64) {
	x, n := binary.Varint(b)
	if n <= 0 {
		panic(fmt.Sprintf("shard: corrupt usage record %x", b))
	}
	y, m := binary.Varint(b[n:])
	if m <= 0 {
		panic(fmt.Sprintf("shard: corrupt usage record %x", b))
	}
	return x, y
}
