package wire

import (
	"fmt"
	"time"
)

// Granularities of a usage query (GET /api/v1/usage?granularity=).
const (
	GranularityHour = "hour"
	GranularityDay  = "day"
)

// UsageQuery is a checked usage query: [From, To) in whole UTC buckets of
// its granularity, and optionally one namespace.
type UsageQuery struct {
	From, To    time.Time
	Granularity string
	Namespace   string
}

// Unit is the length of one of q's buckets.
func (q UsageQuery) Unit() time.Duration {
	if q.Granularity == GranularityDay {
		return 24 * time.Hour
	}
	return time.Hour
}

// ParseUsageQuery reads a usage query's range (RFC 3339 from and to,
// granularity hour or day) at now: the one parse the gateway and control
// both use. Defaults: granularity hour, to now, from 24 hours (hour) or 30
// days (day) before to. from is moved back to its bucket's start and to
// forward to its bucket's end, so the answer covers whole UTC hours or
// days. A bad value, to not after from, or more buckets than
// MaxUsageHourBuckets/MaxUsageDayBuckets is a *FieldError naming the
// field. The namespace is the caller's to check (its name rules are
// package tenancy's).
func ParseUsageQuery(now time.Time, from, to, granularity string) (UsageQuery, error) {
	q := UsageQuery{Granularity: granularity}
	limit := MaxUsageHourBuckets
	switch granularity {
	case "", GranularityHour:
		q.Granularity = GranularityHour
	case GranularityDay:
		limit = MaxUsageDayBuckets
	default:
		return UsageQuery{}, fieldErr("granularity", "granularity must be hour or day, not %q", granularity)
	}
	unit := q.Unit()
	rawTo, err := parseUsageTime("to", to, now)
	if err != nil {
		return UsageQuery{}, err
	}
	q.To = ceilTo(rawTo, unit)
	def := q.To.Add(-24 * time.Hour)
	if q.Granularity == GranularityDay {
		def = q.To.AddDate(0, 0, -30)
	}
	rawFrom, err := parseUsageTime("from", from, def)
	if err != nil {
		return UsageQuery{}, err
	}
	// Compared as given: a range inside one bucket is still a range.
	if !rawTo.After(rawFrom) {
		return UsageQuery{}, fieldErr("to", "to must be after from")
	}
	q.From = rawFrom.Truncate(unit)
	if n := int(q.To.Sub(q.From) / unit); n > limit {
		return UsageQuery{}, fieldErr("from", "from and to span %d %s buckets, over the limit of %d: narrow the range or use a coarser granularity",
			n, q.Granularity, limit)
	}
	return q, nil
}

// parseUsageTime reads an RFC 3339 time, or def when s is empty.
func parseUsageTime(field, s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def.UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fieldErr(field, "%s must be an RFC 3339 time such as 2026-01-02T15:00:00Z, not %q", field, s)
	}
	return t.UTC(), nil
}

// ceilTo is t moved forward to a multiple of unit (UTC hours and days are
// multiples of their length since Go's zero time).
func ceilTo(t time.Time, unit time.Duration) time.Time {
	c := t.Truncate(unit)
	if c.Before(t) {
		c = c.Add(unit)
	}
	return c
}

// FieldError is bad input that a server answers 400 bad_request naming
// Field (internal/apierr.Invalid).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
