package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// QueueSpec is a queue's whole configuration, the body of PutQueue: the
// call creates the queue or replaces its configuration, and what the spec
// leaves zero is reset (no description, not paused, no concurrency limit,
// no throttle, no queue defaults), except Schema, which nil keeps. A Queue
// read afterwards shows the same configuration (QueueSpecOf gives it back
// as a spec).
type QueueSpec struct {
	// Description is free text, at most 1024 characters.
	Description string
	// Paused stops workers getting the queue's jobs; enqueues go on.
	Paused bool
	// Concurrency is how many of the queue's jobs may be active at once
	// across all workers (1 = one at a time); nil for no limit.
	Concurrency *int64
	// KeyConcurrency caps the active jobs of each concurrency key (1 to
	// 10,000); nil for no cap.
	KeyConcurrency *int64
	// Throttle is the queue's rate limit; nil for none.
	Throttle *QueueThrottleSpec
	// Defaults are what the queue's jobs get for the options their
	// producer leaves out.
	Defaults QueueDefaultsSpec
	// Push makes it a push queue; nil for a pull queue.
	Push *QueuePushSpec
	// Schema is the JSON Schema (draft 2020-12) every payload enqueued to
	// the queue must satisfy, as JSON. Unlike the other fields, nil keeps
	// the queue's schema as it is (so a spec built without one never
	// erases it), and the JSON literal null, NoSchema, removes it. The
	// server stores it in canonical form (keys sorted, no spaces): Queue's
	// Schema shows that form and SchemaVersion its version.
	Schema json.RawMessage
}

// NoSchema is the QueueSpec.Schema that removes the queue's schema: any
// payload is taken again.
var NoSchema = json.RawMessage("null")

// QueueThrottleSpec lets at most Rate fetches of a queue happen in any
// window of Period (1s to 7 days).
type QueueThrottleSpec struct {
	Rate   int64
	Period time.Duration
}

// QueueDefaultsSpec are a queue's job defaults. A zero field (nil
// MaxRetries, "" RetryBackoff, 0 durations) has no queue default: the
// built-in one applies.
type QueueDefaultsSpec struct {
	MaxRetries     *int
	RetryBackoff   string
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// LeaseDuration is the lease of a fetch that asks for none.
	LeaseDuration time.Duration
	// ExpireAfter is how long a job may wait before it runs; past it, it
	// is dead (expired).
	ExpireAfter time.Duration
	// Retention is how long completed and cancelled jobs are kept.
	Retention time.Duration
}

// MarshalJSON writes the spec as a wire.QueueSpec: every field, null where
// it is unset, but schema, left out when nil (kept).
func (s QueueSpec) MarshalJSON() ([]byte, error) {
	w := wire.QueueSpec{Description: s.Description, Paused: s.Paused, Defaults: s.Defaults.wire(), Push: s.Push.wire(),
		Schema: s.Schema}
	if s.Concurrency != nil {
		w.Concurrency = strconv.AppendInt(nil, *s.Concurrency, 10)
	}
	if s.KeyConcurrency != nil {
		w.KeyConcurrency = &wire.KeyConcurrencyRequest{Max: strconv.AppendInt(nil, *s.KeyConcurrency, 10)}
	}
	if t := s.Throttle; t != nil {
		rate := t.Rate
		w.Throttle = &wire.ThrottleRequest{Rate: &rate, Period: wire.Duration(t.Period)}
	}
	return json.Marshal(w)
}

func (d QueueDefaultsSpec) wire() *wire.QueueDefaults {
	w := &wire.QueueDefaults{MaxRetries: d.MaxRetries, RetryBaseDelay: wire.Duration(d.RetryBaseDelay),
		RetryMaxDelay: wire.Duration(d.RetryMaxDelay), LeaseDuration: wire.Duration(d.LeaseDuration),
		ExpireAfter: wire.Duration(d.ExpireAfter), Retention: wire.Duration(d.Retention)}
	if d.RetryBackoff != "" {
		b := d.RetryBackoff
		w.RetryBackoff = &b
	}
	return w
}

// PutQueue creates queue name or replaces its whole configuration with
// spec, in one idempotent call, and returns the queue as it now is.
func (c *Client) PutQueue(ctx context.Context, name string, spec QueueSpec) (*Queue, error) {
	return c.queueCall(ctx, "PUT", queuePath(name, ""), spec)
}

// QueueSpecOf is the configuration q shows, as a spec: PutQueue with it
// changes nothing (its schema again keeps the version; a queue without
// one gives a nil Schema).
func QueueSpecOf(q *Queue) (QueueSpec, error) {
	s := QueueSpec{Description: q.Description, Paused: q.Paused}
	if raw := bytes.TrimSpace(q.Schema); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		s.Schema = bytes.Clone(raw)
	}
	if q.Concurrency != nil {
		n := *q.Concurrency
		s.Concurrency = &n
	}
	if k := q.KeyConcurrency; k != nil {
		n := k.Max
		s.KeyConcurrency = &n
	}
	if t := q.Throttle; t != nil {
		p, err := parseDuration("throttle.period", t.Period)
		if err != nil {
			return s, err
		}
		s.Throttle = &QueueThrottleSpec{Rate: t.Rate, Period: p}
	}
	push, err := pushSpecOf(q.Push)
	if err != nil {
		return s, err
	}
	s.Push = push
	d := q.Defaults
	if d == nil {
		return s, nil
	}
	if d.MaxRetries != nil {
		n := *d.MaxRetries
		s.Defaults.MaxRetries = &n
	}
	s.Defaults.RetryBackoff = deref(d.RetryBackoff)
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *time.Duration
	}{
		{"retry_base_delay", d.RetryBaseDelay, &s.Defaults.RetryBaseDelay},
		{"retry_max_delay", d.RetryMaxDelay, &s.Defaults.RetryMaxDelay},
		{"lease_duration", d.LeaseDuration, &s.Defaults.LeaseDuration},
		{"expire_after", d.ExpireAfter, &s.Defaults.ExpireAfter},
		{"retention", d.Retention, &s.Defaults.Retention},
	} {
		v, _, err := wire.ParseDuration(f.raw)
		if err != nil {
			return s, fmt.Errorf("defaults.%s: %w", f.name, err)
		}
		*f.dst = v
	}
	return s, nil
}
