package apierr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	json "github.com/goccy/go-json"
)

// DecodeJSON decodes a request body holding one JSON object into v, with
// the one policy every Jobbie server follows: an unknown field is refused
// (400 naming it), so a misspelt option is an error rather than silently
// ignored, and a value of the wrong type is a 400 naming its field. An
// empty body is refused unless emptyOK. It uses goccy's
// encoding/json-compatible decoder, which halved the time an enqueue
// batch spends in decoding.
func DecodeJSON(body []byte, v any, emptyOK bool) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		if emptyOK {
			return nil
		}
		return New(InvalidJSON, "request body must be a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return New(InvalidJSON, "request body must hold one JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &Error{Code: InvalidJSON, Field: te.Field, Message: fmt.Sprintf("%s must be %s, not %s", te.Field, te.Type, te.Value)}
	case errors.As(err, &se):
		return New(InvalidJSON, "malformed JSON at byte %d: %v", se.Offset, se)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &Error{Code: BadRequest, Field: f, Message: fmt.Sprintf("unknown field %q", f)}
	}
	return New(InvalidJSON, "malformed JSON: %v", err)
}
