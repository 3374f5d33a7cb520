package client

import (
	"errors"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// What the generated code refuses in a job's payload or checkpoint: the
// printing (valueJSON) reads only the parts it prints, so a part sent
// and then replaced (a kind set twice, a key given twice) or a string
// that is not UTF-8 would otherwise read as a job where the generated
// code refused the frame. The check walks every part without allocating.

// valueDepth is the nesting the generated code has left for a job's
// Value: its limit less the frame and the job.
const valueDepth = protowire.DefaultRecursionLimit - 2

var (
	errValueDepth  = errors.New("google.protobuf.Value: nested too deep")
	errInvalidUTF8 = errors.New("a string is not valid UTF-8")
)

// checkValue reports what proto's decoding of a Value in b, depth
// messages deep at most, refuses.
func checkValue(b []byte, depth int) error {
	if depth--; depth < 0 {
		return errValueDepth
	}
	return eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case fieldValueString:
			return validUTF8(v)
		case fieldValueStruct:
			return checkMessages(v, depth, checkEntry)
		case fieldValueList:
			return checkMessages(v, depth, checkValue)
		}
		return nil
	})
}

// checkMessages checks a Struct's or ListValue's messages (field 1).
func checkMessages(b []byte, depth int, check func([]byte, int) error) error {
	if depth--; depth < 0 {
		return errValueDepth
	}
	return eachField(b, func(num protowire.Number, v []byte) error {
		if num == fieldListValues {
			return check(v, depth)
		}
		return nil
	})
}

// checkEntry checks a Struct's map entry, a message of its own to proto.
func checkEntry(b []byte, depth int) error {
	if depth--; depth < 0 {
		return errValueDepth
	}
	return eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case fieldListValues:
			return validUTF8(v)
		case fieldEntryValue:
			return checkValue(v, depth)
		}
		return nil
	})
}

// eachField calls f with each length-delimited field of b, skipping the
// rest: the only wire type of a Value's parts that can be refused, and
// of a Struct's entries and a ListValue's values, which the printing
// (worker_stream_value.go) reads by it too.
func eachField(b []byte, f func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if err := f(num, v); err != nil {
				return err
			}
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil
}

func validUTF8(b []byte) error {
	if !utf8.Valid(b) {
		return errInvalidUTF8
	}
	return nil
}

// consumeTag is protowire.ConsumeTag refusing the field numbers above
// the largest, as proto's decoding does (protowire reads them).
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n >= 0 && num > protowire.MaxValidNumber {
		return 0, 0, -2 // protowire's code for an invalid field number
	}
	return num, typ, n
}
