package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Draft is the one dialect a queue's schema may declare in $schema (or
// leave out).
const Draft = "https://json-schema.org/draft/2020-12/schema"

// location names the schema being compiled: a relative $ref resolves
// against it, and anything but the schema itself goes to noFetch.
const location = "https://schema.jobbie.invalid/queue.json"

// Refusal ends the message of every payload a schema refuses.
const Refusal = "(the queue's schema)"

// Schema is a compiled queue schema.
type Schema struct{ s *jsonschema.Schema }

// Canonical checks raw as a queue's schema (field names it in errors) and
// returns its canonical form: keys sorted, no insignificant space,
// numbers as written. Two schemas that differ only in layout have the
// same canonical bytes, so putting one again is no change.
func Canonical(field string, raw []byte) ([]byte, error) {
	if len(raw) > wire.MaxQueueSchemaBytes {
		return nil, apierr.Field(field, "%s is %d bytes; the limit is %d", field, len(raw), wire.MaxQueueSchemaBytes)
	}
	doc, err := decode(raw)
	if err != nil {
		return nil, apierr.Field(field, "%s is not JSON: %v", field, err)
	}
	switch v := doc.(type) {
	case bool:
	case map[string]any:
		if d, ok := v["$schema"]; ok && d != Draft && d != Draft+"#" {
			return nil, apierr.Field(field, "%s: $schema must be %q (draft 2020-12) or left out", field, Draft)
		}
	default:
		return nil, apierr.Field(field, "%s must be a JSON Schema: an object or a boolean", field)
	}
	if _, err := compile(doc); err != nil {
		return nil, apierr.Field(field, "%s is not a valid JSON Schema (draft 2020-12): %s", field, compileMessage(err))
	}
	return canonical(doc), nil
}

// Compile compiles a schema Canonical accepted.
func Compile(canonical []byte) (*Schema, error) {
	doc, err := decode(canonical)
	if err != nil {
		return nil, err
	}
	s, err := compile(doc)
	if err != nil {
		return nil, err
	}
	return &Schema{s: s}, nil
}

func compile(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noFetch{})
	if err := c.AddResource(location, doc); err != nil {
		return nil, err
	}
	return c.Compile(location)
}

// noFetch is the compiler's loader: a $ref to anything but the schema
// itself (and the draft's meta-schemas, which the library embeds) is
// refused, so a schema never makes the shard read a file or the network.
type noFetch struct{}

var errRemoteRef = errors.New("a $ref may point only inside the schema: remote and file references are not fetched")

func (noFetch) Load(string) (any, error) { return nil, errRemoteRef }

// compileMessage is what a compile error says, shortened to its cause.
func compileMessage(err error) string {
	if errors.Is(err, errRemoteRef) {
		var le *jsonschema.LoadURLError
		if errors.As(err, &le) {
			return fmt.Sprintf("$ref %q: %v", le.URL, errRemoteRef)
		}
		return errRemoteRef.Error()
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, location, "schema")
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	return msg
}

// Check validates payload (nil: no payload, checked as JSON null)
// against s. A refusal names field and the JSON pointer of the value at
// fault ("payload/amount") and the rule it broke ("minimum: got -1,
// want 0").
func (s *Schema) Check(field string, payload []byte) error {
	var doc any
	if len(payload) > 0 {
		var err error
		if doc, err = decode(payload); err != nil {
			return apierr.Field(field, "%s is not JSON: %v", field, err)
		}
	}
	err := s.s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return apierr.Field(field, "%s: %v", field, err)
	}
	leaf := firstLeaf(ve)
	at := field + pointer(leaf.InstanceLocation)
	return apierr.Field(at, "%s: %s %s", at, leaf.ErrorKind.LocalizedString(printer), Refusal)
}

// firstLeaf follows the first cause down to the rule that failed.
func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

// pointer is a JSON pointer (RFC 6901) of the tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// decode reads one JSON value, numbers kept exact.
func decode(raw []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// canonical writes doc with sorted keys, without HTML escaping.
func canonical(doc any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(doc); err != nil {
		panic(err) // doc was decoded from JSON
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
