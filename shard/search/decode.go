package search

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// decodeJSON decodes one JSON document into the values gojq works on
// (nil, bool, json.Number, string, []any, map[string]any) with the result
// encoding/json's Decoder gives with UseNumber.
//
// Why not encoding/json: payload_jq decodes every candidate's payload, and
// encoding/json spends about 3 µs on a 64-byte object, more than the jq
// evaluation itself; this single-pass decoder takes a fraction of that.
// It is a strict parser of RFC 8259 (the differential test and fuzz target
// in decode_test.go hold it to encoding/json), and it hands the rare
// string with escapes or invalid UTF-8 to encoding/json, so unescaping and
// U+FFFD replacement are the standard library's.
func decodeJSON(b []byte) (any, error) {
	d := decoder{b: b}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.b) {
		return nil, errSyntax
	}
	return v, nil
}

var (
	errSyntax = errors.New("invalid JSON")
	errDepth  = errors.New("JSON nested too deeply")
)

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

type decoder struct {
	b []byte
	i int
}

func (d *decoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.i >= len(d.b) {
		return nil, errSyntax
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, errSyntax
}

func (d *decoder) literal(lit string) error {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return errSyntax
	}
	d.i += len(lit)
	return nil
}

func (d *decoder) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, errSyntax
		}
		k, err := d.string()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, errSyntax
		}
		d.i++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		if d.i >= len(d.b) {
			return nil, errSyntax
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return m, nil
		default:
			return nil, errSyntax
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	d.i++ // [
	a := []any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, nil
	}
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.b) {
			return nil, errSyntax
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return a, nil
		default:
			return nil, errSyntax
		}
	}
}

// string decodes a string starting at its opening quote. Plain ASCII and
// valid UTF-8 without escapes are sliced directly; anything else goes to
// encoding/json.
func (d *decoder) string() (string, error) {
	start := d.i
	d.i++
	plain := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			raw := d.b[start:d.i]
			if plain {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errSyntax
			}
			return s, nil
		case c == '\\':
			plain = false
			d.i += 2 // skip the escaped byte; encoding/json validates the escape
		case c < 0x20:
			return "", errSyntax
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n <= 1 {
				plain = false
			}
			d.i += n
		default:
			d.i++
		}
	}
	return "", errSyntax
}

// number scans a number by the JSON grammar and keeps its text.
func (d *decoder) number() (any, error) {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return nil, errSyntax
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return nil, errSyntax
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, errSyntax
		}
	}
	return json.Number(d.b[start:d.i]), nil
}

func (d *decoder) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}
