package connectapi

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"google.golang.org/protobuf/types/known/structpb"
)

// A job's payload and checkpoint made a Value in one pass over their
// JSON, not decoded into Go values first and converted after: the
// detour allocated a fifth more per job frame (BenchmarkLeasedJobs).
// Strings with an escape or invalid UTF-8 are left to goccy/go-json, so
// they read as the shard's decoder reads them; a key given twice keeps
// its last value, as there.

// maxJSONDepth bounds the nesting read, so that no payload exhausts the
// stack and every Value sent is one a worker's protobuf decoder reads:
// an object level is three messages (Value, Struct, its field entry) and
// Go's decoder stops at 10,000. The shard stores nothing deeper than
// wire.MaxJSONDepth; a job nested deeper (stored before that bound) is
// failed as unsendable rather than breaking the worker's stream each
// time it comes back.
const maxJSONDepth = 3000

// jsonValue parses one JSON value from b, nested depth deep, and returns
// the rest.
func jsonValue(b []byte, depth int) (*structpb.Value, []byte, error) {
	b = skipSpace(b)
	if len(b) == 0 {
		return nil, nil, errJSONEnd
	}
	switch c := b[0]; {
	case (c == '{' || c == '[') && depth >= maxJSONDepth:
		return nil, nil, fmt.Errorf("JSON nested deeper than %d", maxJSONDepth)
	case c == '{':
		return jsonObject(b[1:], depth+1)
	case c == '[':
		return jsonList(b[1:], depth+1)
	case c == '"':
		s, rest, err := jsonString(b)
		if err != nil {
			return nil, nil, err
		}
		return structpb.NewStringValue(s), rest, nil
	case c == 't' && len(b) >= 4 && string(b[:4]) == "true":
		return structpb.NewBoolValue(true), b[4:], nil
	case c == 'f' && len(b) >= 5 && string(b[:5]) == "false":
		return structpb.NewBoolValue(false), b[5:], nil
	case c == 'n' && len(b) >= 4 && string(b[:4]) == "null":
		return structpb.NewNullValue(), b[4:], nil
	case c == '-' || c >= '0' && c <= '9':
		n := numberLen(b)
		if n == 0 {
			return nil, nil, fmt.Errorf("invalid JSON number at %q", head(b))
		}
		f, err := strconv.ParseFloat(string(b[:n]), 64)
		if err != nil { // out of range: numberLen let only JSON's grammar through
			// Its head only: the reason a job is failed with must fit a fail
			// (wire.MaxErrorBytes), and a payload may be a megabyte of digits.
			return nil, nil, fmt.Errorf("a JSON number (%q, %d bytes) is out of a double's range", head(b[:n]), n)
		}
		return structpb.NewNumberValue(f), b[n:], nil
	}
	return nil, nil, fmt.Errorf("invalid JSON at %q", head(b))
}

func jsonObject(b []byte, depth int) (*structpb.Value, []byte, error) {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	b = skipSpace(b)
	if len(b) > 0 && b[0] == '}' {
		return structpb.NewStructValue(s), b[1:], nil
	}
	for {
		b = skipSpace(b)
		if len(b) == 0 || b[0] != '"' {
			return nil, nil, fmt.Errorf("invalid JSON object at %q", head(b))
		}
		k, rest, err := jsonString(b)
		if err != nil {
			return nil, nil, err
		}
		b = skipSpace(rest)
		if len(b) == 0 || b[0] != ':' {
			return nil, nil, fmt.Errorf("invalid JSON object at %q", head(b))
		}
		v, rest, err := jsonValue(b[1:], depth)
		if err != nil {
			return nil, nil, err
		}
		s.Fields[k] = v
		b = skipSpace(rest)
		switch {
		case len(b) > 0 && b[0] == ',':
			b = b[1:]
		case len(b) > 0 && b[0] == '}':
			return structpb.NewStructValue(s), b[1:], nil
		default:
			return nil, nil, fmt.Errorf("invalid JSON object at %q", head(b))
		}
	}
}

func jsonList(b []byte, depth int) (*structpb.Value, []byte, error) {
	l := &structpb.ListValue{}
	b = skipSpace(b)
	if len(b) > 0 && b[0] == ']' {
		return structpb.NewListValue(l), b[1:], nil
	}
	for {
		v, rest, err := jsonValue(b, depth)
		if err != nil {
			return nil, nil, err
		}
		l.Values = append(l.Values, v)
		b = skipSpace(rest)
		switch {
		case len(b) > 0 && b[0] == ',':
			b = b[1:]
		case len(b) > 0 && b[0] == ']':
			return structpb.NewListValue(l), b[1:], nil
		default:
			return nil, nil, fmt.Errorf("invalid JSON array at %q", head(b))
		}
	}
}

// jsonString reads the string b starts with.
func jsonString(b []byte) (string, []byte, error) {
	plain := true
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\\':
			plain = false
			i++ // the escaped byte cannot end the string
		case c == '"':
			if plain && utf8.Valid(b[1:i]) {
				return string(b[1:i]), b[i+1:], nil
			}
			var s string
			if err := gojson.Unmarshal(b[:i+1], &s); err != nil {
				return "", nil, err
			}
			return s, b[i+1:], nil
		case c < 0x20:
			return "", nil, fmt.Errorf("invalid JSON string at %q", head(b))
		}
	}
	return "", nil, errJSONEnd
}

var errJSONEnd = fmt.Errorf("unexpected end of JSON")

// numberLen is the length of the JSON number b starts with, 0 for none:
// JSON's grammar, stricter than strconv's ("01", "1.", "-.5" are not
// JSON).
func numberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); b[i-1] == '.' {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0
		}
		i = j
	}
	return i
}

// digits is the index after the digits from b[i].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// head is the start of b, for an error.
func head(b []byte) []byte { return b[:min(len(b), 16)] }
