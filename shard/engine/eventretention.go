package engine

import (
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's event log retention is its tenant's plan's
// (event_retention_hours, event_retention_events), which the gateway
// sends on its requests (wire.EventRetentionHeader). The leader records
// it in the replicated state (keys.EventRetention, EventRetentionSet)
// when it differs from what is recorded, so every later leader trims the
// namespace alike; a namespace never told keeps the node's default.

// EventRetention is how much of a namespace's log the leader keeps: the
// events of the last MaxAge, and at most MaxCount of them.
type EventRetention struct {
	MaxAge   time.Duration
	MaxCount int
}

// DefaultEventRetention is a namespace's retention until its plan sets
// one: the plans' default.
var DefaultEventRetention = EventRetentionOf(wire.DefaultEventRetentionHours, wire.DefaultEventRetentionEvents)

// EventRetentionOf is the retention of a plan's hours and events.
func EventRetentionOf(hours, events int64) EventRetention {
	return EventRetention{MaxAge: time.Duration(hours) * time.Hour, MaxCount: int(events)}
}

// EventRetentionCmd records ns's retention as its plan sets it, within
// the plans' bounds.
type EventRetentionCmd struct {
	NS     string `codec:"n"`
	Hours  int64  `codec:"h"`
	Events int64  `codec:"e"`
}

func (c *EventRetentionCmd) namespace() string { return c.NS }

// eventRetentionRecord is keys.EventRetention's value (an on-disk format).
type eventRetentionRecord struct {
	Hours  int64 `codec:"h"`
	Events int64 `codec:"e"`
}

// ValidEventRetention checks a plan's retention against the plans'
// bounds; a bad one is a 400 naming the field.
func ValidEventRetention(hours, events int64) error {
	if hours < wire.MinEventRetentionHours || hours > wire.MaxEventRetentionHours {
		return apierr.Field("event_retention_hours", "event_retention_hours must be from %d to %d, not %d",
			wire.MinEventRetentionHours, wire.MaxEventRetentionHours, hours)
	}
	if events < wire.MinEventRetentionEvents || events > wire.MaxEventRetentionEvents {
		return apierr.Field("event_retention_events", "event_retention_events must be from %d to %d, not %d",
			wire.MinEventRetentionEvents, wire.MaxEventRetentionEvents, events)
	}
	return nil
}

// applyEventRetention records c's retention for a namespace with state
// here; it reports whether it did (a namespace purged meanwhile is not
// brought back by a record of its own).
func (e *Engine) applyEventRetention(tx *replica.Tx, c *EventRetentionCmd) (bool, error) {
	if err := ValidEventRetention(c.Hours, c.Events); err != nil {
		return false, err
	}
	_, closer, err := tx.Get(keys.Registry(c.NS))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	must(err)
	closer.Close()
	must(tx.Set(keys.EventRetention(c.NS), replica.Encode(&eventRetentionRecord{Hours: c.Hours, Events: c.Events}), nil))
	return true, nil
}

// ReadEventRetention is ns's recorded retention as its plan set it
// (hours, events), and false when none was recorded.
func ReadEventRetention(r pebble.Reader, ns string) (hours, events int64, ok bool) {
	v, closer, err := r.Get(keys.EventRetention(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, 0, false
	}
	must(err)
	defer closer.Close()
	var rec eventRetentionRecord
	must(replica.Decode(v, &rec))
	return rec.Hours, rec.Events, true
}
