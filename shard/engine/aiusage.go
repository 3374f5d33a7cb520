package engine

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// AI usage: what a worker reports its job's model calls used, carried by
// ack, fail, heartbeat and ack-batch (AckCmd.Usage, ...). The apply that
// accepts the call adds it to the job's totals (keys.JobAI) and to the
// namespace's hourly counters per namespace, queue, model and tag
// (keys.AIUsage), at the entry's clock. Each write reads what the batch
// holds, so how entries group into batches never changes the sums.
//
// A report changes what the apply writes, so the calls that carry one go
// under numbers of their own: an older node stops at them instead of
// dropping the usage.
var (
	AckUsage       = replica.Op[AckCmd, job.State]{Type: 108, Name: "ack.usage"}
	FailUsage      = replica.Op[FailCmd, *FailOutcome]{Type: 109, Name: "fail.usage"}
	HeartbeatUsage = replica.Op[HeartbeatCmd, []string]{Type: 110, Name: "heartbeat.usage"}
	AckBatchUsage  = replica.Op[AckBatchCmd, []AckOutcome]{Type: 111, Name: "ack-batch.usage"}
)

// AIUsage is one checked report (wire.AIUsageCounts), or a job's totals.
type AIUsage struct {
	Input      int64  `codec:"i,omitempty"`
	Output     int64  `codec:"o,omitempty"`
	CacheRead  int64  `codec:"cr,omitempty"`
	CacheWrite int64  `codec:"cw,omitempty"`
	CostNanos  int64  `codec:"c,omitempty"` // dollars × 1e9
	Model      string `codec:"m,omitempty"`
	Provider   string `codec:"p,omitempty"`
}

// UsageOf is the command form of a checked report; nil when it adds
// nothing.
func UsageOf(c wire.AIUsageCounts) *AIUsage {
	if c.IsZero() {
		return nil
	}
	u := AIUsage(c)
	return &u
}

// Counts is u as the wire counts it.
func (u AIUsage) Counts() wire.AIUsageCounts { return wire.AIUsageCounts(u) }

func (u *AIUsage) add(o *AIUsage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.CostNanos += o.CostNanos
	if o.Model != "" {
		u.Model = o.Model
	}
	if o.Provider != "" {
		u.Provider = o.Provider
	}
}

// tokens is every kind of token of u, the measure of token budgets.
func (u *AIUsage) tokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// registerAI registers the AI commands with their handlers.
func (e *Engine) registerAI(r *replica.Registry) {
	AckUsage.Handle(r, gated(e, e.applyAck))
	FailUsage.Handle(r, gated(e, e.applyFail))
	HeartbeatUsage.Handle(r, gated(e, e.applyHeartbeat))
	AckBatchUsage.Handle(r, gated(e, e.applyAckBatch))
}

// JobAI is a job's record beside its job record (keys.JobAI): the usage
// its workers reported, summed over heartbeats and attempts, and the
// budget that holds it (budgets.go).
type JobAI struct {
	Reports  int64
	Usage    AIUsage
	HeldBy   string
	Approved bool // approved once: no budget holds it again
}

const jobAIVersion = 1

func (r *JobAI) encode() []byte {
	b := []byte{jobAIVersion}
	for _, v := range []int64{r.Reports, r.Usage.Input, r.Usage.Output, r.Usage.CacheRead, r.Usage.CacheWrite, r.Usage.CostNanos} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, s := range []string{r.Usage.Model, r.Usage.Provider, r.HeldBy} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if r.Approved {
		b = append(b, 1)
	}
	return b
}

func decodeJobAI(v []byte) (*JobAI, error) {
	if len(v) == 0 || v[0] != jobAIVersion {
		return nil, errors.New("engine: job AI record of an unknown version")
	}
	d := uvarints{b: v[1:]}
	r := &JobAI{}
	for _, p := range []*int64{&r.Reports, &r.Usage.Input, &r.Usage.Output, &r.Usage.CacheRead, &r.Usage.CacheWrite, &r.Usage.CostNanos} {
		*p = int64(d.next())
	}
	r.Usage.Model, r.Usage.Provider, r.HeldBy = d.str(), d.str(), d.str()
	r.Approved = len(d.b) > 0 && d.next() == 1
	if d.bad {
		return nil, errors.New("engine: job AI record truncated")
	}
	return r, nil
}

// uvarints reads a record's fields in turn; bad says one was missing.
type uvarints struct {
	b   []byte
	bad bool
}

func (d *uvarints) next() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *uvarints) str() string {
	n := d.next()
	if d.bad || uint64(len(d.b)) < n {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// ReadJobAI reads a job's AI record; nil when it has none.
func ReadJobAI(r pebble.Reader, ns, id string) (*JobAI, error) {
	v, closer, err := r.Get(keys.JobAI(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engine: read job %s usage: %w", id, err)
	}
	defer closer.Close()
	return decodeJobAI(v)
}

// addAIUsage adds one report to j's totals and to its namespace's
// counters of the entry's hour.
func (e *Engine) addAIUsage(tx *replica.Tx, ns string, j *job.Job, u *AIUsage) {
	if u == nil {
		return
	}
	rec, err := ReadJobAI(tx, ns, j.ID)
	must(err)
	if rec == nil {
		rec = &JobAI{}
	}
	rec.Reports++
	before := rec.Usage
	rec.Usage.add(u)
	e.perJobAlerts(tx, ns, j, &before, &rec.Usage)
	must(tx.Set(keys.JobAI(ns, j.ID), rec.encode(), nil))

	hour := tx.Now.UnixNano() - tx.Now.UnixNano()%hourNs
	trimAIUsage(tx, ns, hour)
	model := rec.Usage.Model // the report's, else the job's last
	if e.usage.metering(tx) {
		now := tx.Now.UnixNano()
		for _, m := range []struct {
			meter int
			n     int64
		}{{mAIInput, u.Input}, {mAIOutput, u.Output}, {mAICacheRead, u.CacheRead}, {mAICacheWrite, u.CacheWrite}, {mAICostNanos, u.CostNanos}} {
			if m.n != 0 {
				e.usage.add(tx, ns, now, m.meter, m.n)
			}
		}
	}
	addAISeries(tx, ns, hour, keys.AIDimNamespace, "", u)
	addAISeries(tx, ns, hour, keys.AIDimQueue, j.Queue, u)
	addAISeries(tx, ns, hour, keys.AIDimModel, model, u)
	for k, v := range j.Tags {
		addAISeries(tx, ns, hour, keys.AIDimTag, k+"="+v, u)
	}
}

// AIBucket is one series' counters in one hour.
type AIBucket struct {
	Reports int64
	Usage   AIUsage // tokens and cost only
}

func encodeAIBucket(b *AIBucket) []byte {
	v := make([]byte, 0, 16)
	for _, n := range []int64{b.Reports, b.Usage.Input, b.Usage.Output, b.Usage.CacheRead, b.Usage.CacheWrite, b.Usage.CostNanos} {
		v = binary.AppendUvarint(v, uint64(n))
	}
	return v
}

// DecodeAIBucket reads a counter's value.
func DecodeAIBucket(v []byte) (*AIBucket, error) {
	d := uvarints{b: v}
	b := &AIBucket{}
	for _, p := range []*int64{&b.Reports, &b.Usage.Input, &b.Usage.Output, &b.Usage.CacheRead, &b.Usage.CacheWrite, &b.Usage.CostNanos} {
		*p = int64(d.next())
	}
	if d.bad {
		return nil, errors.New("engine: AI usage counter truncated")
	}
	return b, nil
}

// addAISeries adds u to one series of the hour. A new series of a
// dimension other than the namespace is counted; past
// wire.MaxAIUsageSeries in the hour, it is added to wire.AIUsageOther, so
// an hour holds a bounded number of keys.
func addAISeries(tx *replica.Tx, ns string, hour int64, dim byte, value string, u *AIUsage) {
	key := keys.AIUsage(ns, hour, dim, value)
	v, ok := get(tx, key)
	if !ok && dim != keys.AIDimNamespace {
		ck := keys.AIUsageSeriesCount(ns, hour, dim)
		n := uint64(0)
		if cv, ok := get(tx, ck); ok {
			n, _ = binary.Uvarint(cv)
		}
		if n >= wire.MaxAIUsageSeries {
			key = keys.AIUsage(ns, hour, dim, wire.AIUsageOther)
			v, ok = get(tx, key)
		} else {
			must(tx.Set(ck, binary.AppendUvarint(nil, n+1), nil))
		}
	}
	b := &AIBucket{}
	if ok {
		var err error
		b, err = DecodeAIBucket(v)
		must(err)
	}
	b.Reports++
	b.Usage.add(&AIUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CostNanos: u.CostNanos})
	must(tx.Set(key, encodeAIBucket(b), nil))
}

// trimAIUsage deletes ns's counters older than wire.AIUsageRetention, once
// per hour of reports: the mark (keys.AIUsageMark) holds the hour of the
// last trim.
func trimAIUsage(tx *replica.Tx, ns string, hour int64) {
	mark := keys.AIUsageMark(ns)
	if v, ok := get(tx, mark); ok && len(v) == 8 && int64(binary.BigEndian.Uint64(v)) >= hour {
		return
	}
	if below := hour - int64(wire.AIUsageRetention); below > 0 {
		must(tx.DeleteRange(keys.AIUsageHour(ns, 0), keys.AIUsageHour(ns, below), nil))
	}
	must(tx.Set(mark, binary.BigEndian.AppendUint64(nil, uint64(hour)), nil))
}

// get reads key from the batch and the store; a copy of its value.
func get(r pebble.Reader, key []byte) ([]byte, bool) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false
	}
	must(err)
	defer closer.Close()
	return append([]byte(nil), v...), true
}

// ReadAIUsage sums ns's counters of dimension dim over the hours in
// [from, to) (unix ns), per series value.
func ReadAIUsage(r pebble.Reader, ns string, dim byte, from, to int64) (map[string]*AIBucket, error) {
	total, _, err := ReadAIUsageSteps(r, ns, dim, from, to, 0)
	return total, err
}

// ReadAIUsageSteps is ReadAIUsage's sums over [from, to) and, when step
// (ns, a whole number of hours) is not 0, the same sums per step from
// from: all in one scan of the range's hours.
func ReadAIUsageSteps(r pebble.Reader, ns string, dim byte, from, to, step int64) (map[string]*AIBucket, []map[string]*AIBucket, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: keys.AIUsageHour(ns, max(from, 0)), UpperBound: keys.AIUsageHour(ns, max(to, 0))})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	total := map[string]*AIBucket{}
	var steps []map[string]*AIBucket
	if step > 0 {
		steps = make([]map[string]*AIBucket, (to-from+step-1)/step)
		for i := range steps {
			steps[i] = map[string]*AIBucket{}
		}
	}
	for ok := it.First(); ok; ok = it.Next() {
		hour, d, value, err := keys.ParseAIUsage(ns, it.Key())
		if err != nil || d != dim {
			continue // a series count, or another dimension
		}
		b, err := DecodeAIBucket(it.Value())
		if err != nil {
			return nil, nil, err
		}
		addAIBucket(total, value, b)
		if step > 0 {
			addAIBucket(steps[(hour-from)/step], value, b)
		}
	}
	return total, steps, nil
}

// addAIBucket adds b to sums' bucket of value.
func addAIBucket(sums map[string]*AIBucket, value string, b *AIBucket) {
	sum := sums[value]
	if sum == nil {
		sum = &AIBucket{}
		sums[value] = sum
	}
	sum.Reports += b.Reports
	sum.Usage.add(&b.Usage)
}
