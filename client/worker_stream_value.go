package client

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// A job's payload or checkpoint (a google.protobuf.Value on the wire)
// printed as the JSON protojson prints, from its wire form: the stream's
// frames are read in worker_stream_frame.go, checked as proto would check
// them in worker_stream_check.go.

// valueJSON is a Value's JSON, or null when it has none.
func valueJSON(b []byte) []byte {
	out, err := appendValueJSON(make([]byte, 0, len(b)+len(b)/4), b, 0)
	if err != nil {
		return jsonNull
	}
	return out
}

// valueKind is the Value's kind field (the last one set wins; a struct
// or list sent twice in a row is merged, as proto merges it): its number
// and its value, a string's or message's without the length.
func valueKind(b []byte) (num protowire.Number, v []byte, err error) {
	for len(b) > 0 {
		n, t, l := consumeTag(b)
		if l < 0 {
			return 0, nil, protowire.ParseError(l)
		}
		b = b[l:]
		if l = protowire.ConsumeFieldValue(n, t, b); l < 0 {
			return 0, nil, protowire.ParseError(l)
		}
		if n >= fieldValueNull && n <= fieldValueList && t == kindType(n) {
			x := b[:l]
			if t == protowire.BytesType {
				x, _ = protowire.ConsumeBytes(x)
			}
			if n == num && (n == fieldValueStruct || n == fieldValueList) {
				v = merge(v, x)
			} else {
				num, v = n, x[:len(x):len(x)]
			}
		}
		b = b[l:]
	}
	if num == 0 {
		return 0, nil, errNoKind
	}
	return num, v, nil
}

func kindType(n protowire.Number) protowire.Type {
	switch n {
	case fieldValueNumber:
		return protowire.Fixed64Type
	case fieldValueNull, fieldValueBool:
		return protowire.VarintType
	}
	return protowire.BytesType
}

// isNullValue reports a Value whose kind is null.
func isNullValue(b []byte) bool {
	num, _, err := valueKind(b)
	return err == nil && num == fieldValueNull
}

// appendValueJSON appends the JSON of the Value encoded in b: the JSON
// protojson prints (object keys sorted, a repeated key's last value),
// without its whitespace.
func appendValueJSON(out, b []byte, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return nil, errors.New("google.protobuf.Value: nested too deep")
	}
	num, v, err := valueKind(b)
	if err != nil {
		return nil, err
	}
	switch num {
	case fieldValueNull:
		return append(out, "null"...), nil
	case fieldValueBool:
		x, _ := protowire.ConsumeVarint(v)
		return strconv.AppendBool(out, x != 0), nil
	case fieldValueNumber:
		x, _ := protowire.ConsumeFixed64(v)
		return appendNumber(out, math.Float64frombits(x))
	case fieldValueString:
		return appendJSONString(out, v)
	case fieldValueList:
		return appendList(out, v, depth)
	default:
		return appendStruct(out, v, depth)
	}
}

// appendList appends a ListValue's JSON: its values (field 1) in order.
func appendList(out, b []byte, depth int) ([]byte, error) {
	out = append(out, '[')
	first := true
	err := eachField(b, func(num protowire.Number, v []byte) error {
		if num != fieldListValues {
			return nil
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		var err error
		out, err = appendValueJSON(out, v, depth+1)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(out, ']'), nil
}

type structField struct {
	key   string
	value []byte
}

// appendStruct appends a Struct's JSON: its entries (field 1).
func appendStruct(out, b []byte, depth int) ([]byte, error) {
	var fields []structField
	err := eachField(b, func(num protowire.Number, e []byte) error {
		if num != fieldListValues {
			return nil
		}
		k, v, err := entry(e, true)
		fields = append(fields, structField{key: k, value: v})
		return err
	})
	if err != nil {
		return nil, err
	}
	// protojson's order; of a key sent twice, the last (a map's rule).
	slices.SortStableFunc(fields, func(a, b structField) int { return strings.Compare(a.key, b.key) })
	out = append(out, '{')
	first := true
	for i, f := range fields {
		if i+1 < len(fields) && fields[i+1].key == f.key {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		var err error
		if out, err = appendJSONString(out, []byte(f.key)); err != nil {
			return nil, err
		}
		out = append(out, ':')
		if out, err = appendValueJSON(out, f.value, depth+1); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// appendNumber prints a number as protojson does (as encoding/json);
// NaN and infinities are not JSON numbers.
func appendNumber(out []byte, x float64) ([]byte, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("google.protobuf.Value.number_value: invalid %v value", x)
	}
	format := byte('f')
	if abs := math.Abs(x); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, x, format, -1, 64)
	if format == 'e' { // e-07 → e-7
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out, nil
}

// appendJSONString quotes s as protojson does; it must be UTF-8.
func appendJSONString(out, s []byte) ([]byte, error) {
	out = append(out, '"')
	for len(s) > 0 {
		c := s[0]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s)
			if r == utf8.RuneError && n == 1 {
				return nil, errors.New("google.protobuf.Value: invalid UTF-8")
			}
			out, s = append(out, s[:n]...), s[n:]
			continue
		}
		s = s[1:]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c >= ' ':
			out = append(out, c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
	}
	return append(out, '"'), nil
}
