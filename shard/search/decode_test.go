package search

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeCorpus covers the JSON grammar's corners, valid and not.
var decodeCorpus = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.5`, `1e5`, `1E+2`, `1e-2`, `-0.0e0`,
	`12345678901234567891`, `"x"`, `""`, ` {"a" : [1, 2 ,{"b":null}] } `, "\t\r\n[1]\n",
	`{"to":"user@example.com","template":"welcome","amount":150}`,
	`{"a":1,"a":2}`, `{"é":"ü","k":"日本"}`, `"\u00e9\n\t\"\\\/"`, `"\ud83d\ude00"`, `"\ud800"`,
	"\"\xff\xfe\"", "\"a\xc3\"", `{"a":"\u0000"}`,
	// invalid
	``, ` `, `{`, `}`, `[`, `]`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`, `{"a" 1}`,
	`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `--1`, `0x10`, `NaN`, `Infinity`, `tru`, `nul`, `falsey`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\nb\"", "\"a\x01\"", `"\`, `1 2`, `{} {}`, `[1] x`,
	`[1}`, `{"a":1]`, `"\uD83D"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100),
}

// refDecode is what encoding/json gives for b.
func refDecode(b []byte) (any, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

func checkDecode(t *testing.T, b []byte) {
	want, wantOK := refDecode(b)
	got, err := decodeJSON(b)
	if (err == nil) != wantOK {
		t.Fatalf("%q: err = %v, encoding/json ok = %v", b, err, wantOK)
	}
	if wantOK && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, want %#v", b, got, want)
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeCorpus {
		checkDecode(t, []byte(s))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range decodeCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}
