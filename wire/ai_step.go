package wire

import (
	"strconv"
	"time"
)

// MaxAIUsageBuckets bounds the buckets of one GET /api/v1/ai/usage?step=
// answer. A range is at most MaxUsageHourBuckets hours, so a step of an
// hour stays under it; the check keeps the bound if ranges grow.
const MaxAIUsageBuckets = 1000

// ParseAIStep reads GET /api/v1/ai/usage's step: a whole number of hours
// or days ("1h", "6h", "1d", "7d"), since the counters are hourly, from
// an hour to the longest range (MaxUsageHourBuckets hours). "" is 0: no
// buckets. A bad value is a *FieldError naming step.
func ParseAIStep(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	bad := fieldErr("step", "step must be a whole number of hours or days from 1h to %dd, such as 1h, 6h or 1d; got %q",
		MaxUsageHourBuckets/24, s)
	if len(s) < 2 || len(s) > 5 || s[0] == '0' {
		return 0, bad
	}
	n := 0
	for _, c := range s[:len(s)-1] {
		if c < '0' || c > '9' {
			return 0, bad
		}
		n = n*10 + int(c-'0')
	}
	hours := n
	switch s[len(s)-1] {
	case 'h':
	case 'd':
		hours = n * 24
	default:
		return 0, bad
	}
	if hours > MaxUsageHourBuckets {
		return 0, bad
	}
	return time.Duration(hours) * time.Hour, nil
}

// FormatAIStep writes a step as ParseAIStep reads it: in days when it is
// whole days, else in hours.
func FormatAIStep(d time.Duration) string {
	h := int64(d / time.Hour)
	if h%24 == 0 {
		return strconv.FormatInt(h/24, 10) + "d"
	}
	return strconv.FormatInt(h, 10) + "h"
}

// AIUsageSteps is the number of step-long buckets from from that cover
// [from, to) (the last may be cut short at to); more than
// MaxAIUsageBuckets is a *FieldError naming step.
func AIUsageSteps(from, to time.Time, step time.Duration) (int, error) {
	n := int((to.Sub(from) + step - 1) / step)
	if n > MaxAIUsageBuckets {
		return 0, fieldErr("step", "step %s cuts %s to %s into %d buckets, over the limit of %d: use a longer step or a shorter range",
			FormatAIStep(step), from.Format(time.RFC3339), to.Format(time.RFC3339), n, MaxAIUsageBuckets)
	}
	return n, nil
}
