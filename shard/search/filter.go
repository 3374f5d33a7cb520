// Package search is the pure part of job search and bulk-by-filter: it
// parses and validates a search request, compiles its filter into a
// Matcher over stored job records, checks payload_jq against a safe,
// loop-free subset of jq, and defines the sort keys and opaque cursors of
// keyset paging. It does no I/O: the engine picks an index, scans
// candidates and asks the Matcher about each one, so everything here can
// be tested without a store and reused by bulk operations.
package search

import (
	"fmt"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Limits on a filter. Tags, unique keys and worker ids are bounded by what
// a job can carry (wire's limits): a filter value longer than any stored
// value could never match, so it is refused instead of silently returning
// nothing.
const (
	MaxContains      = 1024 // payload_contains, error_contains
	MaxBatchID       = 128
	MaxJQBytes       = 1000 // payload_jq source
	MaxAttemptFilter = 1 << 30
)

// Filter is a validated search filter. Every field is optional (zero, nil
// or "" means "do not filter on this") and the fields combine with AND.
// Build one with ParseFilter or ParseRequest; Compile validates again, so a
// hand-built Filter is checked too.
type Filter struct {
	Queue    string        // exact queue name
	States   []job.State   // any of these states; distinct
	Priority *job.Priority // exact priority

	// Tags must all be present with exactly these values (AND).
	Tags map[string]string

	// PayloadContains is a case-sensitive substring of the payload JSON as
	// stored (the producer's bytes, escapes included).
	PayloadContains string
	// PayloadJQ is a payload_jq expression in the safe subset (see jq.go).
	PayloadJQ string

	// Time windows, in unix nanoseconds like the job record. A job whose
	// time is unset (0) never matches a window on that time.
	Created   TimeRange
	Scheduled TimeRange
	Started   TimeRange
	Completed TimeRange
	Expire    TimeRange // on ExpireAt; a job that never expires has none

	WorkerID      string // the worker of the current or last attempt
	HasErrors     *bool  // true: at least one recorded error; false: none
	ErrorContains string // case-sensitive substring of any recorded error message
	BatchID       string
	UniqueKey     string
	// ConcurrencyKey and FairnessKey match a job's keys exactly.
	ConcurrencyKey string
	FairnessKey    string
	AttemptMin     *int // Attempt ≥ AttemptMin
	AttemptMax     *int // Attempt ≤ AttemptMax
	JobIDPrefix    string

	// HeldReason ("budget", the one reason a job names) and HeldBudget
	// (a budget's name) match held jobs by what holds them: a job held
	// for its dependencies has no reason. The hold is not in the job's
	// record, so the scan asks MatchHold with it (a held job's AI record).
	HeldReason string
	HeldBudget string

	// Scope is the queues the caller may see (wire.QueueScopeHeader): a job
	// of another queue never matches. It is no part of the JSON filter or
	// of a cursor's fingerprint: the service sets it from the request. The
	// zero value is every queue.
	Scope tenancy.QueueScope
}

// TimeRange is the half-open window [After, Before): after is inclusive
// and before exclusive, so adjacent windows (a..b, b..c) neither overlap
// nor leave a gap. A nil bound is open.
type TimeRange struct {
	After  *int64
	Before *int64
}

// IsSet reports whether either bound is set.
func (r TimeRange) IsSet() bool { return r.After != nil || r.Before != nil }

// Contains reports whether t (unix ns, 0 = unset) lies in the window. An
// unset time is outside every set window: "completed before X" must not
// match a job that never completed.
func (r TimeRange) Contains(t int64) bool {
	if !r.IsSet() {
		return true
	}
	if t == 0 {
		return false
	}
	if r.After != nil && t < *r.After {
		return false
	}
	if r.Before != nil && t >= *r.Before {
		return false
	}
	return true
}

// IsEmpty reports whether f filters nothing, so it matches every job.
// Bulk operations use it to refuse an accidental "all jobs" filter.
func (f *Filter) IsEmpty() bool {
	return f.Queue == "" && len(f.States) == 0 && f.Priority == nil && len(f.Tags) == 0 &&
		f.PayloadContains == "" && f.PayloadJQ == "" && !f.Created.IsSet() && !f.Scheduled.IsSet() &&
		!f.Started.IsSet() && !f.Completed.IsSet() && !f.Expire.IsSet() && f.WorkerID == "" &&
		f.HasErrors == nil && f.ErrorContains == "" && f.BatchID == "" && f.UniqueKey == "" &&
		f.ConcurrencyKey == "" && f.FairnessKey == "" &&
		f.AttemptMin == nil && f.AttemptMax == nil && f.JobIDPrefix == "" && !f.ByHold() && f.Scope.All()
}

// ByHold reports whether f filters on what holds a job: only held jobs
// can match it, and each one's hold is read for MatchHold.
func (f *Filter) ByHold() bool { return f.HeldReason != "" || f.HeldBudget != "" }

// MatchHold reports whether a held job held by budget heldBy ("" when
// no budget holds it) satisfies HeldReason and HeldBudget.
func (f *Filter) MatchHold(heldBy string) bool {
	if f.HeldReason != "" && heldBy == "" {
		return false
	}
	return f.HeldBudget == "" || heldBy == f.HeldBudget
}

// HasState reports whether the filter admits state s.
func (f *Filter) HasState(s job.State) bool {
	if len(f.States) == 0 {
		return true
	}
	for _, x := range f.States {
		if x == s {
			return true
		}
	}
	return false
}

// timeFields names each window by its JSON prefix, in a fixed order (used
// by validation messages and by the fingerprint).
func (f *Filter) timeFields() [5]struct {
	name string
	r    *TimeRange
} {
	return [5]struct {
		name string
		r    *TimeRange
	}{{"created", &f.Created}, {"scheduled", &f.Scheduled}, {"started", &f.Started},
		{"completed", &f.Completed}, {"expire", &f.Expire}}
}

// Validate checks every field; prefix is put before field names in errors
// ("" for a search body, "filter." for a bulk body). Every error is a 400
// whose Field and message name the offending field.
func (f *Filter) Validate(prefix string) error {
	if f.Queue != "" {
		if err := tenancy.ValidateQueue(f.Queue); err != nil {
			return fieldErr(prefix+"queue", "%v", err)
		}
	}
	var seen [job.MaxState + 1]bool
	for _, s := range f.States {
		if s == 0 || s > job.MaxState {
			return fieldErr(prefix+"state", "unknown state %d", s)
		}
		if seen[s] {
			return fieldErr(prefix+"state", "state %q is listed twice", s)
		}
		seen[s] = true
	}
	if f.Priority != nil && *f.Priority > job.Normal {
		return fieldErr(prefix+"priority", "unknown priority %d", *f.Priority)
	}
	if len(f.Tags) > wire.MaxTags {
		return fieldErr(prefix+"tags", "at most %d tags; got %d", wire.MaxTags, len(f.Tags))
	}
	for k, v := range f.Tags {
		if k == "" || len(k) > wire.MaxTagKey || strings.IndexByte(k, 0) >= 0 {
			return fieldErr(prefix+"tags", "tag keys must be 1-%d bytes without NUL; got %q", wire.MaxTagKey, clip(k))
		}
		if len(v) > wire.MaxTagValue || strings.IndexByte(v, 0) >= 0 {
			return fieldErr(prefix+"tags", "tag %q: values must be at most %d bytes, without NUL", k, wire.MaxTagValue)
		}
	}
	for _, s := range []struct {
		name, v string
		max     int
	}{
		{"payload_contains", f.PayloadContains, MaxContains},
		{"error_contains", f.ErrorContains, MaxContains},
		{"worker_id", f.WorkerID, wire.MaxWorkerID},
		{"batch_id", f.BatchID, MaxBatchID},
		{"unique_key", f.UniqueKey, wire.MaxUniqueKey},
		{"concurrency_key", f.ConcurrencyKey, wire.MaxFairnessKey},
		{"fairness_key", f.FairnessKey, wire.MaxFairnessKey},
		{"job_id_prefix", f.JobIDPrefix, keys.JobIDLen},
	} {
		if len(s.v) > s.max {
			return fieldErr(prefix+s.name, "must be at most %d bytes; got %d", s.max, len(s.v))
		}
		if strings.IndexByte(s.v, 0) >= 0 {
			return fieldErr(prefix+s.name, "must not contain NUL")
		}
	}
	if f.HeldReason != "" && f.HeldReason != wire.HeldReasonBudget {
		return fieldErr(prefix+"held_reason", "unknown held_reason %q; the one reason is %q", clip(f.HeldReason), wire.HeldReasonBudget)
	}
	if len(f.HeldBudget) > wire.MaxBudgetNameBytes {
		return fieldErr(prefix+"held_budget", "must be at most %d bytes; got %d", wire.MaxBudgetNameBytes, len(f.HeldBudget))
	}
	if f.ByHold() && len(f.States) > 0 && !f.HasState(job.Held) {
		return fieldErr(prefix+"held_reason", "only held jobs have a held_reason or held_budget: add \"held\" to state or leave state out")
	}
	if f.PayloadJQ != "" {
		if _, err := parseJQ(f.PayloadJQ); err != nil {
			return fieldErr(prefix+"payload_jq", "%s", err.Error())
		}
	}
	for _, t := range f.timeFields() {
		if t.r.After != nil && t.r.Before != nil && *t.r.After > *t.r.Before {
			return fieldErr(prefix+t.name+"_after", "%s_after is later than %s_before", t.name, t.name)
		}
	}
	for _, a := range []struct {
		name string
		v    *int
	}{{"attempt_min", f.AttemptMin}, {"attempt_max", f.AttemptMax}} {
		if a.v != nil && (*a.v < 0 || *a.v > MaxAttemptFilter) {
			return fieldErr(prefix+a.name, "must be between 0 and %d", MaxAttemptFilter)
		}
	}
	if f.AttemptMin != nil && f.AttemptMax != nil && *f.AttemptMin > *f.AttemptMax {
		return fieldErr(prefix+"attempt_min", "attempt_min %d is greater than attempt_max %d", *f.AttemptMin, *f.AttemptMax)
	}
	return nil
}

// fieldErr is a 400 naming field both in Field and at the head of the
// message ("payload_jq: function \"input\" is not allowed"), so the message
// alone tells a human which field to fix.
func fieldErr(field, format string, args ...any) *apierr.Error {
	return apierr.Field(field, "%s: %s", field, fmt.Sprintf(format, args...))
}

// clip shortens a user value quoted back in an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
