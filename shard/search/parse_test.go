package search

import (
	"strings"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// wantFieldErr asserts err is a 400 bad_request whose Field is field and
// whose message starts with "field:" and contains every part of want.
func wantFieldErr(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error on %s, got none", field)
	}
	e := apierr.From(err)
	if e.Code != apierr.BadRequest || apierr.Status(e.Code) != 400 {
		t.Fatalf("code = %s (%d), want bad_request 400: %v", e.Code, apierr.Status(e.Code), err)
	}
	if e.Field != field {
		t.Fatalf("field = %q, want %q: %v", e.Field, field, err)
	}
	if !strings.HasPrefix(e.Message, field+": ") {
		t.Fatalf("message %q does not start with %q", e.Message, field+": ")
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Fatalf("message %q does not mention %q", e.Message, w)
		}
	}
}

func TestParseRequestSeedExample(t *testing.T) {
	body := `{
	  "queue": "emails.send",
	  "state": ["pending", "dead"],
	  "priority": "normal",
	  "tags": { "tenant": "acme-corp" },
	  "payload_contains": "user@example.com",
	  "payload_jq": ".template == \"welcome\"",
	  "created_after": "2026-02-10T00:00:00Z",
	  "created_before": "2026-02-11T23:59:59Z",
	  "worker_id": "worker-abc",
	  "has_errors": true,
	  "error_contains": "SMTP",
	  "sort": "created_at",
	  "order": "desc",
	  "cursor": null,
	  "limit": 50
	}`
	r, err := ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	f := r.Filter
	if f.Queue != "emails.send" || len(f.States) != 2 || f.States[0] != job.Pending || f.States[1] != job.Dead {
		t.Fatalf("queue/state: %+v", f)
	}
	if f.Priority == nil || *f.Priority != job.Normal || f.Tags["tenant"] != "acme-corp" {
		t.Fatalf("priority/tags: %+v", f)
	}
	after := time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC).UnixNano()
	before := time.Date(2026, 2, 11, 23, 59, 59, 0, time.UTC).UnixNano()
	if *f.Created.After != after || *f.Created.Before != before {
		t.Fatalf("created: %d %d", *f.Created.After, *f.Created.Before)
	}
	if f.WorkerID != "worker-abc" || !*f.HasErrors || f.ErrorContains != "SMTP" || f.PayloadJQ == "" {
		t.Fatalf("rest: %+v", f)
	}
	if r.Sort != wire.SortCreatedAt || r.Order != wire.OrderDesc || r.Limit != 50 || r.Cursor != "" || r.After != nil {
		t.Fatalf("paging: %+v", r)
	}
}

func TestParseRequestDefaults(t *testing.T) {
	for _, body := range []string{"", "  ", "{}", `{"limit": 0}`, `{"sort": null, "order": null}`} {
		r, err := ParseRequest([]byte(body))
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if r.Sort != wire.SortCreatedAt || r.Order != wire.OrderDesc || r.Limit != wire.DefaultSearchLimit || !r.Filter.IsEmpty() {
			t.Fatalf("%q: %+v", body, r)
		}
	}
	r, err := ParseRequest([]byte(`{"sort":"priority","order":"asc","limit":1000}`))
	if err != nil || r.Sort != wire.SortPriority || r.Order != wire.OrderAsc || r.Limit != 1000 {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestParseFilterFields(t *testing.T) {
	f, err := ParseFilter([]byte(`{
	  "state": "dead", "priority": "critical",
	  "scheduled_after": "2026-02-10", "scheduled_before": "2026-02-11T00:00:00.5+01:00",
	  "started_after": "2026-01-01T00:00:00Z", "started_before": "2026-01-02T00:00:00Z",
	  "completed_after": "2026-01-01T00:00:00Z", "completed_before": "2026-01-02T00:00:00Z",
	  "expire_after": "2026-01-01T00:00:00Z", "expire_before": "2026-01-02T00:00:00Z",
	  "batch_id": "batch_1", "unique_key": "u1", "attempt_min": 1, "attempt_max": 3.0,
	  "job_id_prefix": "job_01", "has_errors": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.States) != 1 || f.States[0] != job.Dead || *f.Priority != job.Critical {
		t.Fatalf("%+v", f)
	}
	if *f.Scheduled.After != time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC).UnixNano() {
		t.Fatal("bare date is not midnight UTC")
	}
	if *f.Scheduled.Before != time.Date(2026, 2, 10, 23, 0, 0, 5e8, time.UTC).UnixNano() {
		t.Fatal("offset time not converted")
	}
	if !f.Started.IsSet() || !f.Completed.IsSet() || !f.Expire.IsSet() {
		t.Fatal("windows not set")
	}
	if f.BatchID != "batch_1" || f.UniqueKey != "u1" || *f.AttemptMin != 1 || *f.AttemptMax != 3 || f.JobIDPrefix != "job_01" || *f.HasErrors {
		t.Fatalf("%+v", f)
	}
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("x", 2000)
	manyTags := "{"
	for i := range 33 {
		if i > 0 {
			manyTags += ","
		}
		manyTags += `"k` + strings.Repeat("0", i) + `":"v"`
	}
	manyTags += "}"
	cases := []struct {
		body, field string
		want        []string
	}{
		{`{"queue_name":"x"}`, "queue_name", []string{"unknown field"}},
		{`{"queue":5}`, "queue", []string{"string"}},
		{`{"queue":""}`, "queue", []string{"empty"}},
		{`{"queue":"bad queue"}`, "queue", []string{"1-128"}},
		{`{"queue":"` + strings.Repeat("q", 129) + `"}`, "queue", nil},
		{`{"state":"sleeping"}`, "state", []string{`"sleeping"`}},
		{`{"state":["pending","pending"]}`, "state", []string{"twice"}},
		{`{"state":[]}`, "state", []string{"at least one"}},
		{`{"state":[1]}`, "state", nil},
		{`{"state":{"a":1}}`, "state", nil},
		{`{"priority":"urgent"}`, "priority", []string{`"urgent"`}},
		{`{"priority":["high"]}`, "priority", []string{"string"}},
		{`{"tags":["a"]}`, "tags", []string{"object"}},
		{`{"tags":{"a":1}}`, "tags", []string{"object"}},
		{`{"tags":{"":"v"}}`, "tags", []string{"tag keys"}},
		{`{"tags":{"k":"` + long + `"}}`, "tags", []string{`"k"`}},
		{`{"tags":` + manyTags + `}`, "tags", []string{"at most 32"}},
		{`{"payload_contains":"` + long + `"}`, "payload_contains", []string{"at most 1024"}},
		{`{"error_contains":"` + long + `"}`, "error_contains", []string{"at most 1024"}},
		{`{"error_contains":true}`, "error_contains", []string{"string"}},
		{`{"job_id_prefix":"` + strings.Repeat("j", 31) + `"}`, "job_id_prefix", []string{"at most 30"}},
		{`{"worker_id":"` + long + `"}`, "worker_id", nil},
		{`{"batch_id":"` + long + `"}`, "batch_id", nil},
		{`{"unique_key":"a\u0000b"}`, "unique_key", []string{"NUL"}},
		{`{"created_after":"yesterday"}`, "created_after", []string{"RFC 3339", `"yesterday"`}},
		{`{"created_before":1700000000}`, "created_before", []string{"RFC 3339"}},
		{`{"expire_before":"2026-13-01"}`, "expire_before", nil},
		{`{"started_after":"3000-01-01T00:00:00Z"}`, "started_after", []string{"2261"}},
		{`{"created_after":"2026-02-11","created_before":"2026-02-10"}`, "created_after", []string{"later than created_before"}},
		{`{"completed_after":"2026-02-11","completed_before":"2026-02-10"}`, "completed_after", nil},
		{`{"has_errors":"yes"}`, "has_errors", []string{"true or false"}},
		{`{"attempt_min":-1}`, "attempt_min", nil},
		{`{"attempt_max":1.5}`, "attempt_max", []string{"integer"}},
		{`{"attempt_max":"3"}`, "attempt_max", []string{"integer"}},
		{`{"attempt_min":5,"attempt_max":2}`, "attempt_min", []string{"greater than attempt_max"}},
		{`{"payload_jq":""}`, "payload_jq", []string{"empty"}},
		{`{"payload_jq":".a |"}`, "payload_jq", []string{"invalid expression"}},
		{`{"payload_jq":"input"}`, "payload_jq", []string{`function "input" is not allowed`}},
		{`{"payload_jq":"` + strings.Repeat(".a and ", 200) + `true"}`, "payload_jq", []string{"limit is 1000"}},
		{`{"sort":"name"}`, "sort", []string{`"name"`}},
		{`{"sort":1}`, "sort", []string{"string"}},
		{`{"order":"up"}`, "order", []string{"asc or desc"}},
		{`{"limit":-1}`, "limit", nil},
		{`{"limit":1001}`, "limit", []string{"1000"}},
		{`{"limit":"10"}`, "limit", []string{"integer"}},
		{`{"cursor":5}`, "cursor", []string{"string"}},
		{`{"cursor":"!!!"}`, "cursor", []string{"malformed"}},
	}
	for _, c := range cases {
		t.Run(c.body[:min(len(c.body), 40)], func(t *testing.T) {
			_, err := ParseRequest([]byte(c.body))
			wantFieldErr(t, err, c.field, c.want...)
		})
	}
}

func TestParseFilterPrefixesFields(t *testing.T) {
	_, err := ParseFilter([]byte(`{"state":["dead","nope"]}`))
	wantFieldErr(t, err, "filter.state", `"nope"`)
	_, err = ParseFilter([]byte(`{"sort":"created_at"}`))
	wantFieldErr(t, err, "filter.sort", "unknown field")
	_, err = ParseFilter([]byte(`{"attempt_min":3,"attempt_max":1}`))
	wantFieldErr(t, err, "filter.attempt_min")
	for _, raw := range []string{"", "null", "[]", `"x"`} {
		_, err = ParseFilter([]byte(raw))
		wantFieldErr(t, err, "filter", "JSON object")
	}
	f, err := ParseFilter([]byte(`{}`))
	if err != nil || !f.IsEmpty() {
		t.Fatalf("{}: %+v %v", f, err)
	}
	f, err = ParseFilter([]byte(`{"tags":{}}`))
	if err != nil || !f.IsEmpty() {
		t.Fatalf("empty tags: %+v %v", f, err)
	}
}

func TestParseMalformedBody(t *testing.T) {
	for _, body := range []string{`{`, `[1]`, `{"queue":"a"} {}`, `nope`} {
		_, err := ParseRequest([]byte(body))
		if apierr.CodeOf(err) != apierr.InvalidJSON || apierr.Status(apierr.From(err).Code) != 400 {
			t.Fatalf("%q: %v", body, err)
		}
	}
}

func TestValidateHandBuiltFilter(t *testing.T) {
	bad := job.State(42)
	_, err := Compile(&Filter{States: []job.State{bad}})
	wantFieldErr(t, err, "state")
	p := job.Priority(9)
	_, err = Compile(&Filter{Priority: &p})
	wantFieldErr(t, err, "priority")
	_, err = Compile(&Filter{PayloadJQ: "$ENV"})
	wantFieldErr(t, err, "payload_jq", "$ENV is not allowed")
}

// A filter by hold admits held jobs only and is no empty filter; its
// cursor belongs to its budget's search alone; a bad value is a 400
// naming the field.
func TestHeldFilter(t *testing.T) {
	r, err := ParseRequest([]byte(`{"held_reason":"budget","held_budget":"daily"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Filter.IsEmpty() || !r.Filter.ByHold() {
		t.Fatal("a filter by hold is not empty")
	}
	m, err := Compile(&r.Filter)
	if err != nil {
		t.Fatal(err)
	}
	if m.Match(&job.Job{ID: "job_1", State: job.Pending}) || !m.Match(&job.Job{ID: "job_1", State: job.Held}) {
		t.Fatal("only a held job can match a filter by hold")
	}
	if !r.Filter.MatchHold("daily") || r.Filter.MatchHold("") || r.Filter.MatchHold("other") {
		t.Fatal("MatchHold admits the named budget's jobs alone")
	}
	if f := (Filter{HeldReason: wire.HeldReasonBudget}); !f.MatchHold("any") || f.MatchHold("") {
		t.Fatal("held_reason budget admits every budget's jobs, not the dependencies'")
	}
	other, err := ParseRequest([]byte(`{"held_reason":"budget","held_budget":"nightly"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Fingerprint() == other.Fingerprint() {
		t.Fatal("two budgets' searches share a cursor fingerprint")
	}
	_, err = ParseFilter([]byte(`{"held_reason":"deps"}`))
	wantFieldErr(t, err, "filter.held_reason", `"budget"`)
	_, err = ParseRequest([]byte(`{"held_budget":"b","state":["dead"]}`))
	wantFieldErr(t, err, "held_reason", "held")
}
