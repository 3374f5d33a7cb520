package search

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/jobbie/jobbie/shard/job"
)

// Matcher decides whether a stored job satisfies a Filter. It is
// immutable after Compile and safe for concurrent use.
type Matcher struct {
	// Filter is what the matcher checks. The engine reads it to choose an
	// index (Queue, States, BatchID, Tags, JobIDPrefix, Created, …); it
	// must not change it.
	Filter *Filter

	states   uint32 // bit s set = state s admitted; 0 = any
	contains []byte // PayloadContains as bytes
	jq       *gojq.Code
	windows  []window
}

type window struct {
	r   TimeRange
	get func(*job.Job) int64
}

// Compile validates f and prepares its checks. Errors are 400s naming the
// field (as Filter.Validate with no prefix).
func Compile(f *Filter) (*Matcher, error) {
	if err := f.Validate(""); err != nil {
		return nil, err
	}
	m := &Matcher{Filter: f, contains: []byte(f.PayloadContains)}
	for _, s := range f.States {
		m.states |= 1 << s
	}
	for _, w := range []window{
		{f.Created, func(j *job.Job) int64 { return j.CreatedAt }},
		{f.Scheduled, func(j *job.Job) int64 { return j.ScheduledAt }},
		{f.Started, func(j *job.Job) int64 { return j.StartedAt }},
		{f.Completed, func(j *job.Job) int64 { return j.CompletedAt }},
		{f.Expire, func(j *job.Job) int64 { return j.ExpireAt }},
	} {
		if w.r.IsSet() {
			m.windows = append(m.windows, w)
		}
	}
	if f.PayloadJQ != "" {
		code, err := compileJQ(f.PayloadJQ)
		if err != nil {
			return nil, fieldErr("payload_jq", "%s", err.Error())
		}
		m.jq = code
	}
	return m, nil
}

// Match reports whether j satisfies every filter but the hold's
// (Filter.MatchHold, which needs the job's AI record). Cheap field checks come
// first, then the substring searches, and payload_jq last, so most
// candidates are rejected without decoding their payload.
func (m *Matcher) Match(j *job.Job) bool {
	return m.MatchContext(context.Background(), j)
}

// MatchContext is Match with the search's context handed to the payload_jq
// evaluation, so a cancelled or timed-out search also stops inside one
// evaluation. One context per search is enough: the subset is loop-free,
// so no single evaluation needs a deadline of its own. Once ctx is done
// every payload_jq evaluation reports false, so a scan must check ctx.Err()
// itself rather than take those falses for "no match".
func (m *Matcher) MatchContext(ctx context.Context, j *job.Job) bool {
	f := m.Filter
	if f.Queue != "" && j.Queue != f.Queue || !f.Scope.Allows(j.Queue) {
		return false
	}
	if m.states != 0 && (j.State > job.MaxState || m.states&(1<<j.State) == 0) || f.ByHold() && j.State != job.Held {
		return false
	}
	if f.Priority != nil && j.Priority != *f.Priority {
		return false
	}
	for i := range m.windows {
		if !m.windows[i].r.Contains(m.windows[i].get(j)) {
			return false
		}
	}
	if f.AttemptMin != nil && j.Attempt < *f.AttemptMin || f.AttemptMax != nil && j.Attempt > *f.AttemptMax {
		return false
	}
	if f.JobIDPrefix != "" && !strings.HasPrefix(j.ID, f.JobIDPrefix) {
		return false
	}
	if f.BatchID != "" && j.BatchID != f.BatchID ||
		f.UniqueKey != "" && j.UniqueKey != f.UniqueKey ||
		f.ConcurrencyKey != "" && j.ConcurrencyKey() != f.ConcurrencyKey ||
		f.FairnessKey != "" && j.FairnessKey() != f.FairnessKey ||
		f.WorkerID != "" && j.WorkerID != f.WorkerID {
		return false
	}
	for k, v := range f.Tags {
		if got, ok := j.Tags[k]; !ok || got != v {
			return false
		}
	}
	if f.HasErrors != nil && *f.HasErrors != (len(j.Errors) > 0) {
		return false
	}
	if len(m.contains) > 0 && !bytes.Contains(j.Payload, m.contains) {
		return false
	}
	if f.ErrorContains != "" && !errorContains(j.Errors, f.ErrorContains) {
		return false
	}
	if m.jq != nil && !m.evalJQ(ctx, j.Payload) {
		return false
	}
	return true
}

func errorContains(errs []job.AttemptError, s string) bool {
	for i := range errs {
		if strings.Contains(errs[i].Error, s) {
			return true
		}
	}
	return false
}

// evalJQ runs payload_jq on the payload and takes its first output as the
// verdict: true unless it is false or null, or there is none. A payload
// that does not decode, or an expression that fails on this payload (a
// type error, say), is "no match" for this job, never a failed search.
//
// Numbers are decoded as json.Number (as encoding/json's UseNumber does),
// which gojq compares exactly: large integers (ids beyond 2^53) keep their
// value, and 100 == 100.0 still holds.
func (m *Matcher) evalJQ(ctx context.Context, payload json.RawMessage) bool {
	v, ok := decodePayload(payload)
	if !ok {
		return false
	}
	out, ok := m.jq.RunWithContext(ctx, v).Next()
	if !ok {
		return false
	}
	switch out := out.(type) {
	case nil, error:
		return false
	case bool:
		return out
	}
	return true
}

func decodePayload(p json.RawMessage) (any, bool) {
	if len(p) == 0 {
		return nil, true
	}
	v, err := decodeJSON(p)
	return v, err == nil
}
