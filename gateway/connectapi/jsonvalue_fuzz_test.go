package connectapi

import (
	"encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// valueOfDecoded is the reading jsonValue replaced: goccy/go-json's Go
// values made a Value.
func valueOfDecoded(raw []byte) (*structpb.Value, error) {
	var x any
	if err := gojson.Unmarshal(raw, &x); err != nil {
		return nil, err
	}
	return structpb.NewValue(x)
}

// A payload reads as protojson reads it, and as the shard's decoder
// (goccy/go-json) read it before; what is not JSON is refused.
func FuzzJSONValue(f *testing.F) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `-0.5`, `1e300`, `-1E-7`, `12345678901234567890`, `""`,
		`"plain"`, `"é ünïcode 😀"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u4e2d\ud83d\ude00"`, `"a\u0000b"`, `"\ud800"`, `{"\udc00x":"\ud83d"}`, "{\"\xff\":1}",
		` { "a" : [ 1 , "two" , { "three" : [ ] } ] , "b" : null , "a2" : true } `, "{\n\t\"k\":\r\n[true,false,null]}",
		`[[[[[]]]]]`, `{"":{"":""}}`, `{"dup":1,"dup":2}`, "\"a\xffb\"", `{`, `[1,]`, `{"a"}`, `{"a":1,}`, `{a:1}`, `"open`,
		`tru`, `nul`, `-`, `1e999`, `{} {}`, `[1 2]`, "\"tab\tin\"", `'x'`, `01`, `1.`, `-.5`, `.5`, `1e`, `+1`, `0x10`, `NaN`, `1.5e+3`,
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := valueOf(in)
		if len(in) == 0 {
			if got != nil || err != nil {
				t.Fatalf("no JSON read as %v, %v", got, err)
			}
			return
		}
		if !json.Valid(in) {
			if err == nil {
				t.Fatalf("%q is not JSON, read as %v", in, got)
			}
			return
		}
		was, wasErr := valueOfDecoded(in)
		if wasErr != nil {
			if err == nil {
				t.Fatalf("%q was refused (%v), read as %v", in, wasErr, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q was read as %v, refused: %v", in, was, err)
		}
		if _, err := proto.Marshal(got); err != nil { // a frame that cannot be sent
			t.Fatalf("%q read as %v cannot be written: %v", in, got, err)
		}
		if !sameValue(t, was, got) {
			t.Fatalf("%q:\n got %v\n was %v", in, got, was)
		}
		var pj structpb.Value
		if protojson.Unmarshal(in, &pj) == nil && !sameValue(t, &pj, got) {
			t.Fatalf("%q:\n got %v\nprotojson %v", in, got, &pj)
		}
	})
}

// sameValue compares a and b bit for bit (proto.Equal has -0 == 0).
func sameValue(t *testing.T, a, b *structpb.Value) bool {
	ab, err := proto.MarshalOptions{Deterministic: true}.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := proto.MarshalOptions{Deterministic: true}.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ab) == string(bb)
}
