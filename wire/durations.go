package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// FormatDuration writes d the way the API writes durations: "5s", "10m",
// "1h30m", "1.5s" (not "10m0s").
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Duration is d as a JSON duration field ("5s"), or nil for zero (left
// out of a request).
func Duration(d time.Duration) json.RawMessage {
	if d == 0 {
		return nil
	}
	b, _ := json.Marshal(FormatDuration(d)) // a plain string: cannot fail
	return b
}

// Time is t as a JSON time field (RFC 3339, UTC), or nil for the zero
// time.
func Time(t time.Time) json.RawMessage {
	if t.IsZero() {
		return nil
	}
	b, _ := json.Marshal(t.UTC())
	return b
}

// maxSeconds is the longest duration ParseDuration reads as a number of
// seconds (about 292 years): past it a time.Duration overflows.
var maxSeconds = float64(math.MaxInt64) / float64(time.Second)

// errDuration is ParseDuration's complaint; callers name the field.
var errDuration = errors.New(`not a duration like "5s" or a number of seconds`)

// ParseDuration reads a duration field: a Go duration string ("5s",
// "10m") or a number of seconds. ok is false when the field is absent or
// null; "" is not a duration.
func ParseDuration(raw json.RawMessage) (d time.Duration, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, false, nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false, errDuration
		}
		if d, err = time.ParseDuration(s); err != nil {
			return 0, false, errDuration
		}
		return d, true, nil
	}
	secs, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.Abs(secs) > maxSeconds {
		return 0, false, errDuration
	}
	return time.Duration(secs * float64(time.Second)), true, nil
}
