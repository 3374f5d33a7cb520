package shard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
)

// Limits on what a producer may send.
const (
	MaxPayloadBytes = 1 << 20 // one job's payload
	MaxBatchJobs    = 1000
	MaxTags         = 32
	maxTagKey       = 64
	maxTagValue     = 256
	maxUniqueKey    = 256
	maxMaxRetries   = 1000
	maxDelay        = 30 * 24 * time.Hour
	MaxErrorBytes   = 64 << 10 // error and backtrace of one failure
	maxProgress     = 64 << 10
	maxCheckpoint   = 1 << 20
)

// EnqueueRequest is one job as a producer sends it (seed protocol).
type EnqueueRequest struct {
	Queue          string            `json:"queue"`
	Payload        json.RawMessage   `json:"payload"`
	Priority       string            `json:"priority"`
	UniqueKey      string            `json:"unique_key"`
	UniquePeriod   *int64            `json:"unique_period"`
	MaxRetries     *int              `json:"max_retries"`
	RetryBackoff   string            `json:"retry_backoff"`
	RetryBaseDelay json.RawMessage   `json:"retry_base_delay"`
	RetryMaxDelay  json.RawMessage   `json:"retry_max_delay"`
	ScheduledAt    json.RawMessage   `json:"scheduled_at"`
	ExpireAfter    json.RawMessage   `json:"expire_after"`
	Tags           map[string]string `json:"tags"`
	// Flows (flows.go).
	Chain               *ChainSpec `json:"chain"`
	DependsOn           []string   `json:"depends_on"`
	OnDependencyFailure string     `json:"on_dependency_failure"`
}

// toJob validates r and builds the record to propose. field prefixes field
// names in errors (e.g. "jobs[3].").
func (r *EnqueueRequest) toJob(field string, id string) (*job.Job, error) {
	if err := tenancy.ValidateQueue(r.Queue); err != nil {
		if r.Queue == "" {
			return nil, apierr.Field(field+"queue", "queue is required")
		}
		return nil, apierr.Field(field+"queue", "%v", err)
	}
	j := &job.Job{ID: id, Queue: r.Queue, MaxRetries: job.DefaultMaxRetries, Backoff: job.DefaultBackoff,
		BaseDelay: int64(job.DefaultBaseDelay), MaxDelay: int64(job.DefaultMaxDelay), Tags: r.Tags}
	p := bytes.TrimSpace(r.Payload)
	if len(p) > MaxPayloadBytes {
		return nil, &apierr.Error{Code: apierr.TooLarge, Field: field + "payload", Message: fmt.Sprintf("payload is %d bytes; the limit is %d", len(p), MaxPayloadBytes)}
	}
	if len(p) == 0 {
		p = []byte("null")
	}
	j.Payload = p
	prio, err := job.ParsePriority(r.Priority)
	if err != nil {
		return nil, apierr.Field(field+"priority", "%v", err)
	}
	j.Priority = prio
	if r.MaxRetries != nil {
		if *r.MaxRetries < 0 || *r.MaxRetries > maxMaxRetries {
			return nil, apierr.Field(field+"max_retries", "max_retries must be between 0 and %d", maxMaxRetries)
		}
		j.MaxRetries = *r.MaxRetries
	}
	if r.RetryBackoff != "" {
		if err := job.ValidBackoff(r.RetryBackoff); err != nil {
			return nil, apierr.Field(field+"retry_backoff", "%v", err)
		}
		j.Backoff = r.RetryBackoff
	}
	baseSet := false
	if d, ok, err := parseDuration(field+"retry_base_delay", r.RetryBaseDelay); err != nil {
		return nil, err
	} else if ok {
		j.BaseDelay, baseSet = int64(d), true
	}
	if d, ok, err := parseDuration(field+"retry_max_delay", r.RetryMaxDelay); err != nil {
		return nil, err
	} else if ok {
		j.MaxDelay = int64(d)
		// Only a pair the producer sent is checked: a missing side may come
		// from the queue's defaults, and a delay is always capped at the max.
		if baseSet && j.MaxDelay < j.BaseDelay {
			return nil, apierr.Field(field+"retry_max_delay", "retry_max_delay must not be less than retry_base_delay")
		}
	}
	if d, ok, err := parseDuration(field+"expire_after", r.ExpireAfter); err != nil {
		return nil, err
	} else if ok {
		if d == 0 {
			return nil, apierr.Field(field+"expire_after", "expire_after must be positive")
		}
		j.ExpireAfter = int64(d)
	}
	at, err := parseTime(field+"scheduled_at", r.ScheduledAt)
	if err != nil {
		return nil, err
	}
	j.ScheduledAt = at
	if err := r.validateUnique(field, j); err != nil {
		return nil, err
	}
	if err := validateTags(field+"tags", r.Tags); err != nil {
		return nil, err
	}
	return j, nil
}

func (r *EnqueueRequest) validateUnique(field string, j *job.Job) error {
	if r.UniqueKey == "" {
		if r.UniquePeriod != nil {
			return apierr.Field(field+"unique_period", "unique_period needs a unique_key")
		}
		return nil
	}
	if len(r.UniqueKey) > maxUniqueKey || strings.ContainsRune(r.UniqueKey, 0) {
		return apierr.Field(field+"unique_key", "unique_key must be at most %d bytes without NUL", maxUniqueKey)
	}
	j.UniqueKey = r.UniqueKey
	if r.UniquePeriod != nil {
		if *r.UniquePeriod < 0 || time.Duration(*r.UniquePeriod)*time.Second > maxDelay {
			return apierr.Field(field+"unique_period", "unique_period must be between 0 and %d seconds", int64(maxDelay/time.Second))
		}
		// A period in ns; apply adds the entry's clock to make it absolute.
		j.UniqueUntil = *r.UniquePeriod * int64(time.Second)
	}
	return nil
}

func validateTags(field string, tags map[string]string) error {
	if len(tags) > MaxTags {
		return apierr.Field(field, "at most %d tags", MaxTags)
	}
	for k, v := range tags {
		if k == "" || len(k) > maxTagKey || len(v) > maxTagValue {
			return apierr.Field(field, "tag keys must be 1-%d bytes and values at most %d bytes", maxTagKey, maxTagValue)
		}
	}
	return nil
}

// parseDuration accepts a Go duration string ("5s", "10m") or a number of
// seconds. ok is false when the field is absent or null.
func parseDuration(field string, raw json.RawMessage) (d time.Duration, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, false, nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, apierr.Field(field, "%s must be a duration like \"5s\" or a number of seconds", field)
		}
		d, err = time.ParseDuration(s)
	} else {
		var secs float64
		secs, err = strconv.ParseFloat(string(raw), 64)
		d = time.Duration(secs * float64(time.Second))
	}
	if err != nil {
		return 0, false, apierr.Field(field, "%s must be a duration like \"5s\" or a number of seconds", field)
	}
	if d < 0 {
		return 0, false, apierr.Field(field, "%s must not be negative", field)
	}
	if d > maxDelay {
		return 0, false, apierr.Field(field, "%s must be at most %s", field, maxDelay)
	}
	return d, true, nil
}

// parseTime accepts an RFC 3339 time or null.
func parseTime(field string, raw json.RawMessage) (int64, error) {
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
	return t.UnixNano(), nil
}

// checkJSON validates an optional JSON value a worker sends.
func checkJSON(field string, raw json.RawMessage, limit int) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > limit {
		return nil, &apierr.Error{Code: apierr.TooLarge, Field: field, Message: fmt.Sprintf("%s is over %d bytes", field, limit)}
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	return raw, nil
}
