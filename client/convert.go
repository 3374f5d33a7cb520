package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Helpers for converting between the SDK's Go types and the wire package's
// JSON shapes.

// ceilSeconds is d in whole seconds, rounded up so that a positive
// duration never becomes zero.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// rawOrNil returns nil for an absent or JSON null value, so callers can
// test len(raw) == 0.
func rawOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return raw
}

// marshalRaw encodes a caller's value (a payload, a result) for a
// json.RawMessage field of a wire shape; nil stays nil, so omitempty
// leaves the field out.
func marshalRaw(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// encodeOptional encodes *p for an optional raw field; nil stays nil.
func encodeOptional[T any](p *T) (json.RawMessage, error) {
	if p == nil {
		return nil, nil
	}
	return json.Marshal(p)
}

// decodeOptional decodes raw into a new T; absent or null is nil.
func decodeOptional[T any](raw json.RawMessage) (*T, error) {
	if rawOrNil(raw) == nil {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

// parseDuration reads a duration the server wrote as a string ("5s",
// "10m"); "" is zero.
func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return d, nil
}

// deref is *p, or the zero value for nil: the SDK shows the wire's
// nullable fields as plain values where zero means absent.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
