package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// formatDuration renders d the way the API writes durations ("5s", "10m",
// "1h30m", "1.5s"), or "" for zero.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// ceilSeconds is d in whole seconds, rounded up so that a positive
// duration never becomes zero.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// wireDuration reads a duration the server wrote either as a Go duration
// string ("5s", "10m") or as a number of seconds; null is zero.
type wireDuration time.Duration

func (d *wireDuration) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*d = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = wireDuration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration %s: %w", b, err)
	}
	*d = wireDuration(secs * float64(time.Second))
	return nil
}

// rawOrNil returns nil for an absent or JSON null value, so callers can
// test len(raw) == 0.
func rawOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return raw
}
