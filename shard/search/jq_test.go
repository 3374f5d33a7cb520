package search

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/shard/job"
)

func jqMatch(t *testing.T, expr, payload string) bool {
	t.Helper()
	m, err := Compile(&Filter{PayloadJQ: expr})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return m.Match(&job.Job{Payload: json.RawMessage(payload)})
}

const seedPayload = `{"email":"user@example.com","amount":150,"tags":["vip","beta"],
  "metadata":{"region":"us-east"},"template":"welcome_v2","items":[1,2,3,4,5,6],
  "id":12345678901234567891,"price":99.5,"name":"Ada","flag":false,"none":null}`

// The seed's six examples, and the constructs of the subset one by one.
func TestJQAllowed(t *testing.T) {
	cases := []struct {
		expr string
		want bool
	}{
		// seed examples
		{`.email == "user@example.com"`, true},
		{`.amount > 100`, true},
		{`.tags | contains("vip")`, true},
		{`.metadata.region == "us-east"`, true},
		{`.template | startswith("welcome")`, true},
		{`.items | length > 5`, true},
		// and their negatives
		{`.email == "other@example.com"`, false},
		{`.amount > 150`, false},
		{`.tags | contains("gold")`, false},
		{`.metadata.region == "eu-west"`, false},
		{`.template | startswith("legacy")`, false},
		{`.items | length > 6`, false},
		// identity, field access, literal index, optional
		{`.`, true},
		{`.["email"] == "user@example.com"`, true},
		{`."metadata"."region" == "us-east"`, true},
		{`.metadata["region"] == "us-east"`, true},
		{`.items[0] == 1`, true},
		{`.items[-1] == 6`, true},
		{`.items[10] == null`, true},
		{`.missing.deeper == null`, true},
		{`.email.x? == null`, false}, // .x of a string: error, ? gives no output → no match
		// comparisons
		{`.amount != 100`, true},
		{`.amount >= 150`, true},
		{`.amount <= 150`, true},
		{`.amount < 150`, false},
		{`.price > 99.25`, true},
		{`.amount == 150.0`, true},
		{`.id == 12345678901234567891`, true}, // beyond 2^64 and 2^53: exact
		{`.id == 12345678901234567890`, false},
		{`.name < "B"`, true},
		// logic
		{`.amount > 100 and .name == "Ada"`, true},
		{`.amount > 200 or .name == "Ada"`, true},
		{`.amount > 200 or .name == "Bob"`, false},
		{`.flag | not`, true},
		{`not(.flag)`, true},
		{`not(.amount > 100)`, false},
		{`(.amount > 100) and (.tags | contains(["beta", "vip"]))`, true},
		// literals
		{`true`, true},
		{`false`, false},
		{`null`, false},
		{`.none`, false},
		{`.flag`, false},
		{`0`, true}, // jq: only false and null are falsy
		{`""`, true},
		{`.tags == ["vip", "beta"]`, true},
		{`.metadata == {"region": "us-east"}`, true},
		{`.metadata == {region: "us-east"}`, true},
		{`[.name, .amount] == ["Ada", 150]`, true},
		{`{name} == {"name": "Ada"}`, true},
		{`-1 < .amount`, true},
		// functions
		{`.email | endswith("@example.com")`, true},
		{`.email | contains("example")`, true},
		{`.metadata | has("region")`, true},
		{`.metadata | has("zone")`, false},
		{`.items | has(5)`, true},
		{`.name | ascii_downcase == "ada"`, true},
		{`.name | ascii_upcase == "ADA"`, true},
		{`.name | length == 3`, true},
		{`.metadata | length == 1`, true},
		{`.metadata | contains({"region": "us"})`, true},
		{`.tags | contains(["vi"])`, true}, // jq: array elements match by substring
		{`.items | contains([2, 6])`, true},
		{`.items | contains(7)`, false},
		// if/then/else
		{`if .amount > 100 then .name == "Ada" else false end`, true},
		{`if .amount > 1000 then true elif .name == "Ada" then false else true end`, false},
		{`if .flag then false end`, true},
	}
	for _, c := range cases {
		if got := jqMatch(t, c.expr, seedPayload); got != c.want {
			t.Errorf("%s = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestJQContainsSemantics(t *testing.T) {
	// jq's own cases keep their meaning.
	if !jqMatch(t, `.s | contains("bar")`, `{"s":"foobar"}`) {
		t.Error("string substring")
	}
	if !jqMatch(t, `.a | contains(["vip"])`, `{"a":["vip-gold"]}`) {
		t.Error("jq array containment matches elements by substring")
	}
	if jqMatch(t, `.a | contains([{"k":1}])`, `{"a":[{"k":2}]}`) {
		t.Error("object element mismatch")
	}
	// Our extension: an array against a non-array asks for membership
	// (jq raises an error there).
	if !jqMatch(t, `.a | contains(3)`, `{"a":[1,2,3]}`) || jqMatch(t, `.a | contains(true)`, `{"a":[1,2,3]}`) {
		t.Error("array against scalar")
	}
	// Other kind mismatches are errors, so no match, and "not" of an error
	// is still no match rather than true.
	if jqMatch(t, `.s | contains(1)`, `{"s":"x"}`) || jqMatch(t, `.s | contains(1) | not`, `{"s":"x"}`) {
		t.Error("kind mismatch must not match")
	}
	// The budget stops quadratic containment on big arrays.
	big := `{"a":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 2000), ",") + `],
	  "b":[` + strings.TrimSuffix(strings.Repeat(`"y",`, 200), ",") + `]}`
	if !jqMatch(t, `.a | contains(.)`, big) {
		t.Error("an array contains itself")
	}
	start := time.Now()
	if jqMatch(t, `.a | contains(["y"])`, big) {
		t.Error("no y in a")
	}
	if jqMatch(t, `contains({"a": .b})`, big) { // 400,000 comparisons: over budget
		t.Error("over budget must not match")
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("contains took %v", d)
	}
}

// Runtime errors and odd payloads are "no match" for that job only.
func TestJQRuntimeErrorsAreNoMatch(t *testing.T) {
	cases := []struct{ expr, payload string }{
		{`.name | ascii_downcase == "x"`, `{"name": 5}`},
		{`.a | startswith("x")`, `{"a": [1]}`},
		{`.a | has("x")`, `{"a": "str"}`},
		{`.a.b`, `{"a": "str"}`},
		{`.[0]`, `{"a": 1}`},
		{`.a`, `not json`},
		{`.a`, ``},
		{`.`, `null`},
		{`.a`, `[1,2]`},
	}
	for _, c := range cases {
		if jqMatch(t, c.expr, c.payload) {
			t.Errorf("%s on %s matched", c.expr, c.payload)
		}
	}
	// A failing job does not poison the next one.
	m, _ := Compile(&Filter{PayloadJQ: `.a | startswith("x")`})
	if m.Match(&job.Job{Payload: json.RawMessage(`{"a":1}`)}) || !m.Match(&job.Job{Payload: json.RawMessage(`{"a":"xy"}`)}) {
		t.Error("error leaked across jobs")
	}
}

func TestJQForbidden(t *testing.T) {
	cases := []struct{ expr, name string }{
		{`def f: .; f`, "def"},
		{`reduce .items as $x (0; . + $x)`, "reduce"},
		{`foreach .items as $x (0; .)`, "foreach"},
		{`try .a catch false`, "try/catch"},
		{`label $out | 1`, "label"},
		{`..`, `".."`},
		{`.. == 1`, `".."`},
		{`$__loc__`, "$__loc__"},
		{`$ENV.HOME`, "$ENV"},
		{`env.HOME`, `function "env"`},
		{`$x`, "variable $x"},
		{`.a as $x | $x`, `"as"`},
		{`. as [$a] | 1`, `"as"`},
		{`input`, `function "input"`},
		{`inputs`, `function "inputs"`},
		{`input_filename`, `function "input_filename"`},
		{`path(.a)`, `function "path"`},
		{`paths`, `function "paths"`},
		{`getpath(["a"])`, `function "getpath"`},
		{`setpath(["a"]; 1)`, `function "setpath"`},
		{`delpaths([["a"]])`, `function "delpaths"`},
		{`"\(.a)" == "x"`, "string interpolation"},
		{`."\(.a)"`, "string interpolation"},
		{`.[]`, `iteration ".[]"`},
		{`.items[]? == 1`, `iteration ".[]"`},
		{`.items[1:2]`, "slice"},
		{`.[.k]`, `index ".[.k]"`},
		{`@base64`, "format @base64"},
		{`@json "x"`, "format @json"},
		{`limit(1; .)`, `function "limit"`},
		{`first(.a)`, `function "first"`},
		{`until(true; .)`, `function "until"`},
		{`while(true; .)`, `function "while"`},
		{`repeat(.)`, `function "repeat"`},
		{`range(10)`, `function "range"`},
		{`recurse`, `function "recurse"`},
		{`error("x")`, `function "error"`},
		{`halt`, `function "halt"`},
		{`halt_error`, `function "halt_error"`},
		{`test("a")`, `function "test"`},
		{`debug`, `function "debug"`},
		{`now`, `function "now"`},
		{`tostring`, `function "tostring"`},
		{`.a, .b`, `","`},
		{`[(.a, .b) | .]`, `","`},
		{`.a + 1 > 2`, `operator "+"`},
		{`.a * 2`, `operator "*"`},
		{`.a // true`, `operator "//"`},
		{`.a = 1`, `operator "="`},
		{`.a |= 1`, `operator "|="`},
		{`{(.k): 1}`, "computed object key"},
		{`{$x}`, "variable $x"},
		{`import "m" as m; .`, "import"},
		{`include "m"; .`, "import"},
		{`m::f`, `function "m::f"`},
		{`contains("a"; "b")`, `"contains" does not take 2`},
		{`length(.)`, `"length" does not take 1`},
		{`if . then input else 1 end`, `function "input"`},
		{`[.a | input]`, `function "input"`},
		{`{a: env}`, `function "env"`},
		{`not(input)`, `function "input"`},
		{`# only a comment`, "empty"},
		{"#J > 1", "empty"},
	}
	for _, c := range cases {
		_, err := ParseRequest([]byte(`{"payload_jq":` + quote(c.expr) + `}`))
		wantFieldErr(t, err, "payload_jq", c.name)
		if _, err := Compile(&Filter{PayloadJQ: c.expr}); err == nil {
			t.Errorf("Compile accepted %s", c.expr)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Concurrent matching shares one compiled program (run with -race).
func TestJQConcurrent(t *testing.T) {
	m, err := Compile(&Filter{PayloadJQ: `.amount > 100 and (.tags | contains("vip"))`})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				p := fmt.Sprintf(`{"amount":%d,"tags":["vip"]}`, k%10*100)
				want := k%10 > 1
				if got := m.Match(&job.Job{Payload: json.RawMessage(p)}); got != want {
					t.Errorf("goroutine %d: %s = %v", i, p, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestJQCancelledContext(t *testing.T) {
	m, err := Compile(&Filter{PayloadJQ: `.a == 1`})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if m.MatchContext(ctx, &job.Job{Payload: json.RawMessage(`{"a":1}`)}) {
		t.Error("a cancelled search must not match")
	}
}

// BenchmarkMatchJQ is the per-candidate cost of payload_jq on a small
// payload: decode plus one evaluation.
func BenchmarkMatchJQ(b *testing.B) {
	m, err := Compile(&Filter{PayloadJQ: `.amount > 100 and (.template | startswith("welcome"))`})
	if err != nil {
		b.Fatal(err)
	}
	j := &job.Job{Payload: json.RawMessage(`{"to":"user@example.com","template":"welcome","amount":150}`)}
	b.ReportAllocs()
	for b.Loop() {
		if !m.Match(j) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkMatchFields is the cost of the cheap checks alone.
func BenchmarkMatchFields(b *testing.B) {
	r, err := ParseRequest([]byte(`{"queue":"emails.send","state":["dead"],"tags":{"tenant":"acme-corp"},"payload_contains":"example.com","error_contains":"SMTP"}`))
	if err != nil {
		b.Fatal(err)
	}
	m, err := Compile(&r.Filter)
	if err != nil {
		b.Fatal(err)
	}
	j := sample()
	b.ReportAllocs()
	for b.Loop() {
		if !m.Match(j) {
			b.Fatal("no match")
		}
	}
}
