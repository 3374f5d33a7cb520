package connectapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// A payload's JSON reads as the Value protojson makes of it, whatever
// its spacing, escapes, numbers and nesting; bad JSON is refused, and a key given twice
// keeps its last value, as the shard's decoder does; nesting is bounded.
func TestJSONValueIsProtojsons(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5`, `1e300`, `-1E-7`, `12345678901234567890`, `""`, `1e-999`, `-1e-400`, `1e0001`,
		`"plain"`, `"é ünïcode 😀"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u4e2d\ud83d\ude00"`, `"a\u0000b"`,
		` { "a" : [ 1 , "two" , { "three" : [ ] } ] , "b" : null , "a2" : true } `,
		"{\n\t\"k\":\r\n[true,false,null]}",
		`[[[[[]]]]]`, `{"":{"":""}}`,
	} {
		want := &structpb.Value{}
		require.NoError(t, protojson.Unmarshal([]byte(in), want), in)
		got, err := valueOf([]byte(in))
		require.NoError(t, err, in)
		require.True(t, proto.Equal(want, got), "%s:\n got %v\nwant %v", in, got, want)
	}
	got, err := valueOf([]byte(`{"dup":1,"dup":2}`)) // protojson refuses it; the shard's decoder keeps the last
	require.NoError(t, err)
	require.Equal(t, 2.0, got.GetStructValue().GetFields()["dup"].GetNumberValue())
	got, err = valueOf([]byte("\"a\xffb\"")) // protojson refuses it too; the shard's decoder reads U+FFFD
	require.NoError(t, err)
	require.Equal(t, "a\uFFFDb", got.GetStringValue())
	got, err = valueOf([]byte(`"a\ud800b\udc00"`)) // lone surrogates: protojson refuses them, the shard stores them (ASCII)
	require.NoError(t, err, "a job the shard stored is not failed for them")
	require.Equal(t, "a\uFFFDb\uFFFD", got.GetStringValue())
	deep := strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	_, err = valueOf([]byte(deep))
	require.NoError(t, err, "as deep as the bound")
	_, err = valueOf([]byte("[" + deep + "]"))
	require.ErrorContains(t, err, "nested deeper", "deeper than the bound")
	for _, in := range []string{`{`, `[1,]`, `{"a"}`, `{"a":1,}`, `{a:1}`, `"open`, `tru`, `nul`, `-`, `1e999`, `{} {}`, `[1 2]`, "\"tab\tin\"", `'x'`,
		`01`, `-01`, `1.`, `-.5`, `1.e5`, `[01]`, `{"a":1.}`, `1e`, `1e+`} { // numbers are JSON's, not strconv's
		_, err := valueOf([]byte(in))
		require.Error(t, err, in)
	}
}

// The deepest payload the stream makes a Value of is one every worker's
// protobuf decoder reads back: an object level is three messages (Value,
// Struct, its field entry), and Go's decoder stops at 10,000 messages.
// A deeper one is failed as unsendable instead of breaking the worker's
// stream each time it is delivered.
func TestDeepestValueDecodesInAWorker(t *testing.T) {
	t.Parallel()
	for _, open := range []string{`{"k":`, `[`} {
		close := map[string]string{`{"k":`: "}", `[`: "]"}[open]
		deep := strings.Repeat(open, maxJSONDepth) + "1" + strings.Repeat(close, maxJSONDepth)
		v, err := valueOf([]byte(deep))
		require.NoError(t, err, "as deep as the bound")
		b, err := proto.Marshal(&jobbiev1.LeasedJob{Payload: v})
		require.NoError(t, err)
		require.NoError(t, proto.Unmarshal(b, &jobbiev1.LeasedJob{}), "a worker decodes the deepest Value the stream sends (%s)", open)
	}
}
