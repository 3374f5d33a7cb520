package service

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// toJob validates r and builds the record to propose. field prefixes field
// names in errors (e.g. "jobs[3]."); queueChecked says r's queue name
// passed its check already; now bounds scheduled_at.
func toJob(lim Limits, r *wire.EnqueueRequest, field string, queueChecked bool, id string, now time.Time) (*job.Job, error) {
	if !queueChecked {
		if err := tenancy.ValidateQueue(r.Queue); err != nil {
			if r.Queue == "" {
				return nil, apierr.Field(field+"queue", "queue is required")
			}
			return nil, apierr.Field(field+"queue", "%v", err)
		}
	}
	j := &job.Job{ID: id, Queue: r.Queue, MaxRetries: job.DefaultMaxRetries, Backoff: job.DefaultBackoff,
		BaseDelay: int64(job.DefaultBaseDelay), MaxDelay: int64(job.DefaultMaxDelay), Tags: r.Tags}
	p, err := lim.checkJSON(field+"payload", r.Payload, wire.MaxPayloadBytes)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		p = []byte("null")
	}
	j.Payload = p
	if err := jobOptions(lim, r, field, j); err != nil {
		return nil, err
	}
	at, err := parseTime(field+"scheduled_at", r.ScheduledAt, now)
	if err != nil {
		return nil, err
	}
	j.ScheduledAt = at
	if err := validateKeys(r, field, j); err != nil {
		return nil, err
	}
	if j.Trace, err = traceOf(field, r.TraceParent, r.TraceState); err != nil {
		return nil, err
	}
	if err := validateUnique(r, field, j); err != nil {
		return nil, err
	}
	return j, nil
}

// jobOptions validates the options a job and a chain step share and sets
// them on j.
func jobOptions(lim Limits, r *wire.EnqueueRequest, field string, j *job.Job) error {
	prio, err := job.ParsePriority(r.Priority)
	if err != nil {
		return apierr.Field(field+"priority", "%v", err)
	}
	j.Priority = prio
	if r.MaxRetries != nil {
		if *r.MaxRetries < 0 || *r.MaxRetries > wire.MaxMaxRetries {
			return apierr.Field(field+"max_retries", "max_retries must be between 0 and %d", wire.MaxMaxRetries)
		}
		j.MaxRetries = *r.MaxRetries
	}
	if r.RetryBackoff != "" {
		if err := job.ValidBackoff(r.RetryBackoff); err != nil {
			return apierr.Field(field+"retry_backoff", "%v", err)
		}
		j.Backoff = r.RetryBackoff
	}
	baseSet := false
	if d, ok, err := parseDuration(field+"retry_base_delay", r.RetryBaseDelay); err != nil {
		return err
	} else if ok {
		j.BaseDelay, baseSet = int64(d), true
	}
	if d, ok, err := parseDuration(field+"retry_max_delay", r.RetryMaxDelay); err != nil {
		return err
	} else if ok {
		j.MaxDelay = int64(d)
		// Only a pair the producer sent is checked: a missing side may come
		// from the queue's defaults, and a delay is always capped at the max.
		if baseSet && j.MaxDelay < j.BaseDelay {
			return apierr.Field(field+"retry_max_delay", "retry_max_delay must not be less than retry_base_delay")
		}
	}
	if d, ok, err := parseDuration(field+"expire_after", r.ExpireAfter); err != nil {
		return err
	} else if ok {
		if d == 0 {
			return apierr.Field(field+"expire_after", "expire_after must be positive")
		}
		j.ExpireAfter = int64(d)
	}
	if d, ok, err := parseDuration(field+"lease_duration", r.LeaseDuration); err != nil {
		return err
	} else if ok {
		if d < wire.MinLease || d > wire.MaxLease {
			return apierr.Field(field+"lease_duration", "lease_duration must be between %s and %s", wire.MinLease, wire.MaxLease)
		}
		j.OwnLeaseNs = int64(d)
	}
	return validateTags(lim, field+"tags", r.Tags)
}

// validateKeys takes the job's concurrency and fairness keys: at most
// wire.MaxFairnessKey bytes of printable UTF-8 each (no control
// characters; the keyed index separates keys with NUL).
func validateKeys(r *wire.EnqueueRequest, field string, j *job.Job) error {
	if err := ValidKey(field+"concurrency_key", r.ConcurrencyKey); err != nil {
		return err
	}
	if err := ValidKey(field+"fairness_key", r.FairnessKey); err != nil {
		return err
	}
	j.SetKeys(r.ConcurrencyKey, r.FairnessKey)
	return nil
}

// ValidKey checks a concurrency or fairness key (an enqueue's, or a
// search filter's) named field.
func ValidKey(field, v string) error {
	if len(v) > wire.MaxFairnessKey {
		return apierr.Field(field, "%s is %d bytes; the limit is %d", field, len(v), wire.MaxFairnessKey)
	}
	if !utf8.ValidString(v) || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return apierr.Field(field, "%s must be printable text, without control characters", field)
	}
	return nil
}

func validateUnique(r *wire.EnqueueRequest, field string, j *job.Job) error {
	if r.UniqueKey == "" {
		if r.UniquePeriod != nil {
			return apierr.Field(field+"unique_period", "unique_period needs a unique_key")
		}
		return nil
	}
	if len(r.UniqueKey) > wire.MaxUniqueKey || strings.ContainsRune(r.UniqueKey, 0) {
		return apierr.Field(field+"unique_key", "unique_key must be at most %d bytes without NUL", wire.MaxUniqueKey)
	}
	j.UniqueKey = r.UniqueKey
	if r.UniquePeriod != nil {
		// Compared in seconds: a huge number would wrap as a Duration.
		if *r.UniquePeriod < 0 || *r.UniquePeriod > int64(wire.MaxDelay/time.Second) {
			return apierr.Field(field+"unique_period", "unique_period must be between 0 and %d seconds", int64(wire.MaxDelay/time.Second))
		}
		// A period in ns; apply adds the entry's clock to make it absolute.
		j.UniqueUntil = *r.UniquePeriod * int64(time.Second)
	}
	return nil
}

func validateTags(lim Limits, field string, tags map[string]string) error {
	if len(tags) > wire.MaxTags {
		return apierr.Field(field, "at most %d tags", wire.MaxTags)
	}
	n := 0 // the bytes the tags store: keys and values
	for k, v := range tags {
		n += len(k) + len(v)
		// The tag index separates key, value and job id with NUL.
		if k == "" || len(k) > wire.MaxTagKey || len(v) > wire.MaxTagValue || strings.IndexByte(k, 0) >= 0 || strings.IndexByte(v, 0) >= 0 {
			return apierr.Field(field, "tag keys must be 1-%d bytes and values at most %d bytes, without NUL", wire.MaxTagKey, wire.MaxTagValue)
		}
		if strings.HasPrefix(k, wire.ReservedTagPrefix) {
			return apierr.Field(field, "tag %q: keys starting with %q are reserved for the server", k, wire.ReservedTagPrefix)
		}
	}
	return lim.size(field, "the tags' keys and values", n, wire.MaxTags*(wire.MaxTagKey+wire.MaxTagValue))
}

// parseDuration reads an optional duration field (wire.ParseDuration)
// of at most wire.MaxDelay. ok is false when the field is absent or null.
func parseDuration(field string, raw json.RawMessage) (d time.Duration, ok bool, err error) {
	d, ok, err = wire.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, false, apierr.Field(field, "%s must be a duration like \"5s\" or a number of seconds", field)
	case d < 0:
		return 0, false, apierr.Field(field, "%s must not be negative", field)
	case d > wire.MaxDelay:
		return 0, false, apierr.Field(field, "%s must be at most %s", field, wire.MaxDelay)
	}
	return d, ok, nil
}

// parseTime accepts an RFC 3339 time or null: a time from the Unix epoch
// to wire.MaxAhead after now (past times mean now).
func parseTime(field string, raw json.RawMessage, now time.Time) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, apierr.Field(field, "%s must be an RFC 3339 time", field)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, apierr.Field(field, "%s must be an RFC 3339 time like 2026-02-11T10:00:00Z", field)
	}
	// Checked as times: out of range, UnixNano would overflow.
	if t.Before(time.Unix(0, 0)) || t.After(now.Add(wire.MaxAhead)) {
		return 0, apierr.Field(field, "%s must be after 1970 and at most %d years ahead", field, int(wire.MaxAhead/(365*24*time.Hour)))
	}
	return t.UnixNano(), nil
}
