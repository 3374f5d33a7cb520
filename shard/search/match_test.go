package search

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/stretchr/testify/require"
)

var (
	day0 = time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC).UnixNano()
	hour = int64(time.Hour)
)

// sample is a dead job with two failed attempts, created at day0+10h.
func sample() *job.Job {
	return &job.Job{
		ID: "job_01HXAAAAAAAAAAAAAAAAAAAAAA", Queue: "emails.send", State: job.Dead, Priority: job.High,
		Payload:     json.RawMessage(`{"to":"user@example.com","template":"welcome","amount":150}`),
		Attempt:     2,
		CreatedAt:   day0 + 10*hour,
		ScheduledAt: day0 + 11*hour,
		StartedAt:   day0 + 12*hour,
		CompletedAt: 0,
		ExpireAt:    day0 + 48*hour,
		UpdatedAt:   day0 + 13*hour,
		Tags:        map[string]string{"tenant": "acme-corp", "region": "eu"},
		Errors:      []job.AttemptError{{Attempt: 1, Error: "SMTP timeout"}, {Attempt: 2, Error: "connection refused"}},
		WorkerID:    "worker-abc",
		BatchID:     "batch_7",
		UniqueKey:   "welcome:42",
	}
}

func mustRequest(t *testing.T, body string) *Request {
	t.Helper()
	r, err := ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return r
}

func matches(t *testing.T, body string, j *job.Job) bool {
	t.Helper()
	m, err := Compile(&mustRequest(t, body).Filter)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m.Match(j)
}

func TestEachFilterAlone(t *testing.T) {
	cases := []struct {
		yes, no string
	}{
		{`{"queue":"emails.send"}`, `{"queue":"emails.other"}`},
		{`{"state":["pending","dead"]}`, `{"state":["pending","completed"]}`},
		{`{"state":"dead"}`, `{"state":"held"}`},
		{`{"priority":"high"}`, `{"priority":"normal"}`},
		{`{"tags":{"tenant":"acme-corp"}}`, `{"tags":{"tenant":"other"}}`},
		{`{"tags":{"tenant":"acme-corp","region":"eu"}}`, `{"tags":{"tenant":"acme-corp","missing":"x"}}`},
		{`{"payload_contains":"user@example.com"}`, `{"payload_contains":"someone@else"}`},
		{`{"payload_jq":".template == \"welcome\""}`, `{"payload_jq":".template == \"legacy\""}`},
		{`{"created_after":"2026-02-10T10:00:00Z"}`, `{"created_after":"2026-02-10T10:00:00.000000001Z"}`},
		{`{"created_before":"2026-02-10T10:00:00.000000001Z"}`, `{"created_before":"2026-02-10T10:00:00Z"}`},
		{`{"created_after":"2026-02-10","created_before":"2026-02-11"}`, `{"created_after":"2026-02-11"}`},
		{`{"scheduled_after":"2026-02-10T11:00:00Z"}`, `{"scheduled_before":"2026-02-10T11:00:00Z"}`},
		{`{"started_after":"2026-02-10T12:00:00Z"}`, `{"started_after":"2026-02-10T13:00:00Z"}`},
		{`{"expire_before":"2026-02-13"}`, `{"expire_after":"2026-02-13"}`},
		{`{"worker_id":"worker-abc"}`, `{"worker_id":"worker-xyz"}`},
		{`{"has_errors":true}`, `{"has_errors":false}`},
		{`{"error_contains":"SMTP"}`, `{"error_contains":"smtp"}`},
		{`{"error_contains":"refused"}`, `{"error_contains":"DNS"}`},
		{`{"batch_id":"batch_7"}`, `{"batch_id":"batch_8"}`},
		{`{"unique_key":"welcome:42"}`, `{"unique_key":"welcome:4"}`},
		{`{"attempt_min":2}`, `{"attempt_min":3}`},
		{`{"attempt_max":2}`, `{"attempt_max":1}`},
		{`{"attempt_min":2,"attempt_max":2}`, `{"attempt_min":0,"attempt_max":0}`},
		{`{"job_id_prefix":"job_01HX"}`, `{"job_id_prefix":"job_02"}`},
	}
	j := sample()
	for _, c := range cases {
		if !matches(t, c.yes, j) {
			t.Errorf("%s: want match", c.yes)
		}
		if matches(t, c.no, j) {
			t.Errorf("%s: want no match", c.no)
		}
	}
}

func TestUnsetTimesAndErrors(t *testing.T) {
	j := sample() // CompletedAt is unset
	for _, body := range []string{`{"completed_before":"2100-01-01"}`, `{"completed_after":"1970-01-02"}`} {
		if matches(t, body, j) {
			t.Errorf("%s matched a job that never completed", body)
		}
	}
	j.ExpireAt = 0
	if matches(t, `{"expire_after":"2026-01-01"}`, j) || matches(t, `{"expire_before":"2100-01-01"}`, j) {
		t.Error("an expire window matched a job that never expires")
	}
	j.Errors = nil
	if !matches(t, `{"has_errors":false}`, j) || matches(t, `{"has_errors":true}`, j) || matches(t, `{"error_contains":"x"}`, j) {
		t.Error("has_errors/error_contains on a job without errors")
	}
}

func TestCombinedFilters(t *testing.T) {
	j := sample()
	all := `{"queue":"emails.send","state":["dead"],"priority":"high","tags":{"tenant":"acme-corp"},
	  "payload_contains":"example.com","payload_jq":".amount > 100 and (.template | startswith(\"wel\"))",
	  "created_after":"2026-02-10","created_before":"2026-02-11","worker_id":"worker-abc","has_errors":true,
	  "error_contains":"SMTP","batch_id":"batch_7","unique_key":"welcome:42","attempt_min":1,"attempt_max":5,
	  "job_id_prefix":"job_01"}`
	if !matches(t, all, j) {
		t.Fatal("every filter agrees, want match")
	}
	// Each filter alone breaks the AND.
	for _, mut := range []func(*job.Job){
		func(j *job.Job) { j.Queue = "other" },
		func(j *job.Job) { j.State = job.Pending },
		func(j *job.Job) { j.Priority = job.Critical },
		func(j *job.Job) { j.Tags = nil },
		func(j *job.Job) { j.Payload = json.RawMessage(`{"amount":150,"template":"welcome"}`) },
		func(j *job.Job) {
			j.Payload = json.RawMessage(`{"to":"a@example.com","amount":50,"template":"welcome"}`)
		},
		func(j *job.Job) { j.CreatedAt += 24 * hour },
		func(j *job.Job) { j.WorkerID = "w2" },
		func(j *job.Job) { j.Errors = j.Errors[1:] },
		func(j *job.Job) { j.BatchID = "" },
		func(j *job.Job) { j.UniqueKey = "" },
		func(j *job.Job) { j.Attempt = 6 },
		func(j *job.Job) { j.ID = "job_02" },
	} {
		j := sample()
		mut(j)
		if matches(t, all, j) {
			t.Errorf("mutated job %+v still matches", j)
		}
	}
}

func TestEmptyFilterMatchesAll(t *testing.T) {
	m, err := Compile(&Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Match(sample()) || !m.Match(&job.Job{}) {
		t.Fatal("empty filter must match every job")
	}
}

func TestMatcherExposesFilter(t *testing.T) {
	r := mustRequest(t, `{"queue":"q1","state":["pending"],"batch_id":"b","job_id_prefix":"job_0","created_after":"2026-02-10"}`)
	m, err := Compile(&r.Filter)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Filter
	if f.Queue != "q1" || !f.HasState(job.Pending) || f.HasState(job.Dead) || f.BatchID != "b" || f.JobIDPrefix != "job_0" || *f.Created.After != day0 {
		t.Fatalf("%+v", f)
	}
}

// A filter's scope (set by the service, never parsed) admits only jobs of
// its queues, and a filter with one is not empty.
func TestScopeMatchesItsQueuesOnly(t *testing.T) {
	r := mustRequest(t, `{"state":["dead"]}`)
	r.Filter.Scope = tenancy.ParseQueueScope("emails.*")
	m, err := Compile(&r.Filter)
	require.NoError(t, err)
	j := sample()
	require.True(t, m.Match(j), j.Queue)
	j.Queue = "billing"
	require.False(t, m.Match(j))
	require.False(t, (&Filter{Scope: tenancy.ParseQueueScope("")}).IsEmpty())
	require.True(t, (&Filter{Scope: tenancy.AllQueues()}).IsEmpty())
	require.Equal(t, mustRequest(t, `{"state":["dead"]}`).Fingerprint(), r.Fingerprint(), "cursors do not depend on it")
}
