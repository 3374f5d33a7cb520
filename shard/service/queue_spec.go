package service

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/schema"
	"github.com/jobbie/jobbie/wire"
)

// PutQueue creates the queue or replaces its whole configuration with r
// (PUT /api/v1/queues/{name}): what r leaves out is reset. Every field is
// checked before anything is proposed, so a refused request changes
// nothing. It answers the queue as GetQueue does.
func (s *Service) PutQueue(ctx context.Context, ns, queue string, r *wire.QueueSpec) (*wire.Queue, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return nil, err
	}
	c, err := toQueueConfig(r)
	if err != nil {
		return nil, err
	}
	if r.Push != nil {
		if c.Push, err = s.toPushConfig(ctx, ns, r.Push); err != nil {
			return nil, err
		}
	}
	c.NS, c.Queue = ns, queue
	return queueSet(ctx, s, ns, queue, engine.QueueConfigureFor(c), c)
}

// toQueueConfig validates a queue's configuration, naming the field at
// fault ("throttle.period", "defaults.retention").
func toQueueConfig(r *wire.QueueSpec) (*engine.QueueConfigCmd, error) {
	c := &engine.QueueConfigCmd{Description: r.Description, Paused: r.Paused}
	if err := validDescription(r.Description); err != nil {
		return nil, err
	}
	if raw := bytes.TrimSpace(r.Concurrency); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &c.Max); err != nil || c.Max < 1 || c.Max > maxConcurrency {
			return nil, apierr.Field("concurrency", "concurrency must be an integer between 1 and %d (1 = one job at a time), or null for no limit", maxConcurrency)
		}
	}
	if k := r.KeyConcurrency; k != nil {
		if err := json.Unmarshal(k.Max, &c.KeyMax); err != nil || c.KeyMax < 1 || c.KeyMax > wire.MaxKeyConcurrency {
			return nil, apierr.Field("key_concurrency.max", "key_concurrency.max must be an integer between 1 and %d (active jobs per concurrency_key), or key_concurrency null for no cap", wire.MaxKeyConcurrency)
		}
	}
	if t := r.Throttle; t != nil {
		if t.Rate == nil || *t.Rate < 1 || *t.Rate > maxThrottleRate {
			return nil, apierr.Field("throttle.rate", "throttle.rate must be an integer between 1 and %d", maxThrottleRate)
		}
		period, ok, err := parseSpan("throttle.period", t.Period, minThrottlePer, maxThrottlePer)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Field("throttle.period", "throttle.period is required: a duration like \"1m\" between 1s and 7 days")
		}
		c.Rate, c.Period = *t.Rate, int64(period)
	}
	switch raw := bytes.TrimSpace(r.Schema); {
	case len(raw) == 0:
		c.KeepSchema = true // left out: kept
	case !bytes.Equal(raw, []byte("null")):
		s, err := schema.Canonical("schema", raw)
		if err != nil {
			return nil, err
		}
		c.Schema = s
	}
	if r.Defaults != nil {
		d, err := toDefaults(r.Defaults, "defaults.")
		if err != nil {
			return nil, err
		}
		c.Defaults = d
	}
	return c, nil
}

// validDescription allows any text of at most wire.MaxQueueDescription
// characters; of control characters only newlines and tabs.
func validDescription(d string) error {
	if n := utf8.RuneCountInString(d); n > wire.MaxQueueDescription {
		return apierr.Field("description", "description is %d characters; the limit is %d", n, wire.MaxQueueDescription)
	}
	if !utf8.ValidString(d) {
		return apierr.Field("description", "description must be valid UTF-8")
	}
	if strings.IndexFunc(d, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0 {
		return apierr.Field("description", "description must not contain control characters other than newlines and tabs")
	}
	return nil
}
