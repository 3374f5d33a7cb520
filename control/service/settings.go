package service

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Parsing of the settings of namespaces and keys. Every failure is a 400
// naming its field.

// present reports whether a field was sent (null included).
func present(raw json.RawMessage) bool { return len(bytes.TrimSpace(raw)) > 0 }

// isNull reports whether a sent field is null.
func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// checkDescription checks a description: UTF-8, no NUL, at most
// wire.MaxDescription bytes.
func checkDescription(d string) error {
	switch {
	case len(d) > wire.MaxDescription:
		return apierr.Field("description", "description is %d bytes, over the limit of %d", len(d), wire.MaxDescription)
	case !utf8.ValidString(d):
		return apierr.Field("description", "description must be valid UTF-8")
	case strings.IndexByte(d, 0) >= 0:
		return apierr.Field("description", "description must not hold a NUL byte")
	}
	return nil
}

// parseDescription reads a sent description: a string, or null for none.
func parseDescription(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var d string
	if json.Unmarshal(raw, &d) != nil {
		return "", apierr.Field("description", "description must be a string")
	}
	return d, checkDescription(d)
}

// parseRetention reads an optional retention: a duration between
// wire.MinRetention and wire.MaxRetention; absent or null is 0 (none) and
// ok false.
func parseRetention(raw json.RawMessage) (d time.Duration, ok bool, err error) {
	d, ok, err = wire.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, false, apierr.Field("retention", "retention must be a duration like \"168h\" or a number of seconds (null for none)")
	case ok && (d < wire.MinRetention || d > wire.MaxRetention):
		return 0, false, apierr.Field("retention", "retention must be between %s and %s (null for none)",
			wire.FormatDuration(wire.MinRetention), wire.FormatDuration(wire.MaxRetention))
	}
	return d, ok, nil
}

// parseSwitch reads a sent boolean; null is false.
func parseSwitch(field string, raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	var on bool
	if json.Unmarshal(raw, &on) != nil {
		return false, apierr.Field(field, "%s must be true or false", field)
	}
	return on, nil
}

// parseBoundedDuration reads an optional duration field between 0 and
// limit; absent or null is def.
func parseBoundedDuration(field string, raw json.RawMessage, def, limit time.Duration) (time.Duration, error) {
	d, ok, err := wire.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, apierr.Field(field, "%s must be a duration like \"1h\" or a number of seconds", field)
	case !ok:
		return def, nil
	case d < 0 || d > limit:
		return 0, apierr.Field(field, "%s must be between 0s and %s", field, wire.FormatDuration(limit))
	}
	return d, nil
}
