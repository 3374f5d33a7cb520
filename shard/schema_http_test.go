package shard

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// paymentSchema is a queue's schema: an object with a non-negative amount.
var paymentSchema = map[string]any{
	"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": []any{"amount"},
	"properties": map[string]any{"amount": map[string]any{"type": "integer", "minimum": 0}},
}

// requireRefused asserts a 400 naming field whose message names the rule.
func requireRefused(t *testing.T, r resp, field, rule string) {
	t.Helper()
	require.Equal(t, 400, r.Status, string(r.Raw))
	e := r.Body["error"].(map[string]any)
	require.Equal(t, field, e["field"], string(r.Raw))
	require.Contains(t, e["message"], rule, string(r.Raw))
}

// jobCount is how many jobs the namespace holds, of every state.
func (b *bundle) jobCount() int {
	b.t.Helper()
	r := b.call("POST", "/api/v1/jobs/search", map[string]any{"limit": 1000})
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	return len(r.Body["jobs"].([]any))
}

// A queue's schema is set with its configuration, read back canonical
// with its version, and a change takes a new version; the same schema
// again is no change.
func TestQueueSchemaIsVersioned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := b.putQueue("payments", map[string]any{"schema": paymentSchema})
	require.EqualValues(t, 1, q["schema_version"])
	canon := `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"amount":{"minimum":0,"type":"integer"}},"required":["amount"],"type":"object"}`
	got := b.call("GET", "/api/v1/queues/payments", nil)
	require.Contains(t, string(got.Raw), `"schema":`+canon)
	require.EqualValues(t, 1, b.putQueue("payments", map[string]any{"schema": paymentSchema})["schema_version"], "the same schema is no change")

	id1 := b.enqueue(map[string]any{"queue": "payments", "payload": map[string]any{"amount": 5}})
	require.EqualValues(t, 1, b.job(id1)["schema_version"])

	// A new schema: a new version; the job keeps the one it was checked against.
	b.putQueue("payments", map[string]any{"schema": map[string]any{"type": "object", "required": []any{"cents"}}})
	require.EqualValues(t, 2, b.queueView("payments")["schema_version"])
	require.EqualValues(t, 1, b.job(id1)["schema_version"])
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments", "payload": map[string]any{"amount": 5}}),
		"payload", "missing property 'cents'")
	id2 := b.enqueue(map[string]any{"queue": "payments", "payload": map[string]any{"cents": 5}})
	require.EqualValues(t, 2, b.job(id2)["schema_version"])

	// A PUT that leaves it out keeps it; null removes it; set again: the next number.
	q = b.putQueue("payments", map[string]any{"description": "kept"})
	require.EqualValues(t, 2, q["schema_version"])
	q = b.putQueue("payments", map[string]any{"schema": nil})
	require.Nil(t, q["schema"])
	require.EqualValues(t, 0, q["schema_version"])
	id3 := b.enqueue(map[string]any{"queue": "payments", "payload": "anything"})
	require.Nil(t, b.job(id3)["schema_version"], "no schema: none recorded")
	require.EqualValues(t, 3, b.putQueue("payments", map[string]any{"schema": paymentSchema})["schema_version"])
}

// A bad schema is refused naming the field, and changes nothing.
func TestQueueSchemaRefusesBadSchemas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("q", map[string]any{"description": "before", "schema": paymentSchema})
	big := map[string]any{"description": string(make([]byte, 0))}
	props := map[string]any{}
	for i := range 3000 {
		props["field_"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676))] = map[string]any{"type": "string", "maxLength": 100}
	}
	big["schema"] = map[string]any{"type": "object", "properties": props}
	for _, c := range []struct {
		schema any
		rule   string
	}{
		{map[string]any{"type": "wrong"}, "not a valid JSON Schema"},
		{map[string]any{"minimum": "zero"}, "not a valid JSON Schema"},
		{map[string]any{"$ref": "https://example.com/schema.json"}, "remote and file references are not fetched"},
		{map[string]any{"$ref": "file:///etc/passwd"}, "remote and file references are not fetched"},
		{map[string]any{"$schema": "http://json-schema.org/draft-07/schema#"}, "draft 2020-12"},
		{42, "an object or a boolean"},
		{big["schema"], "the limit is 65536"},
	} {
		r := b.call("PUT", "/api/v1/queues/q", map[string]any{"description": "after", "schema": c.schema})
		requireRefused(t, r, "schema", c.rule)
	}
	q := b.queueView("q")
	require.Equal(t, "before", q["description"])
	require.EqualValues(t, 1, q["schema_version"])
	// A $ref inside the schema is fine.
	b.putQueue("q", map[string]any{"schema": map[string]any{"$defs": map[string]any{"n": map[string]any{"type": "integer"}},
		"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/n"}}}})
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": map[string]any{"a": "x"}}), "payload/a", "integer")
}

// Every enqueue path refuses a payload its queue's schema refuses, with
// the JSON pointer and the rule, and stores nothing; a valid one passes.
func TestEveryEnqueuePathChecksTheSchema(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("payments", map[string]any{"schema": paymentSchema})
	bad := map[string]any{"amount": -1}
	good := map[string]any{"amount": 1}

	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments", "payload": bad}),
		"payload/amount", "minimum: got -1, want 0")
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments"}), "payload", "want object")
	requireRefused(t, b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{
		map[string]any{"queue": "payments", "payload": good}, map[string]any{"queue": "other", "payload": "x"},
		map[string]any{"queue": "payments", "payload": map[string]any{"amount": "ten"}}}}),
		"jobs[2].payload/amount", "want integer")
	requireRefused(t, b.call("POST", "/api/v1/enqueue/batch", map[string]any{
		"jobs":  []any{map[string]any{"queue": "other", "payload": "x"}},
		"batch": map[string]any{"callback_queue": "payments", "callback_payload": bad}}),
		"batch.callback_payload/amount", "minimum")
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "other", "payload": "x",
		"chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "payments", "payload": bad}}}}),
		"chain.steps[1].payload/amount", "minimum")
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "other", "payload": "x",
		"chain": map[string]any{"steps": []any{map[string]any{}}, "on_failure": map[string]any{"queue": "payments", "payload": good},
			"on_exit": map[string]any{"queue": "payments", "payload": map[string]any{}}}}),
		"chain.on_exit.payload", "missing property 'amount'")
	requireRefused(t, b.call("POST", "/api/v1/schedules", map[string]any{"name": "s", "queue": "payments", "cron": "@every 1h", "payload": bad}),
		"payload/amount", "minimum")
	require.Equal(t, 0, b.jobCount(), "nothing of a refused request is stored")
	require.Equal(t, 404, b.call("GET", "/api/v1/schedules/s", nil).Status)

	// Valid ones pass, and record the version.
	id := b.enqueue(map[string]any{"queue": "payments", "payload": good})
	require.EqualValues(t, 1, b.job(id)["schema_version"])
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "payments", "payload": good}},
		"batch": map[string]any{"callback_queue": "payments", "callback_payload": good}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "other", "payload": "x",
		"chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "payments", "payload": good}}}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	first := r.Body["job_id"].(string)
	require.Nil(t, b.job(first)["schema_version"], "its own queue has no schema")

	// The chain's next step records the version its payload was checked against.
	f := b.fetch([]string{"other"}, nil)
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+first, nil).Status)
	res := b.call("POST", "/api/v1/jobs/search", map[string]any{"queue": "payments", "limit": 100})
	jobs := res.Body["jobs"].([]any)
	require.Len(t, jobs, 3, "the single job, the batch's, the chain's second step (the callback waits on its batch)")
	for _, j := range jobs {
		require.EqualValues(t, 1, j.(map[string]any)["schema_version"], j)
	}
	s := b.createSchedule(map[string]any{"name": "s", "queue": "payments", "cron": "@every 1h", "payload": good})
	r = b.call("POST", "/api/v1/schedules/"+s["id"].(string)+"/run", nil)
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.EqualValues(t, 1, b.job(r.Body["job_id"].(string))["schema_version"])
}

// A schedule's run checks its payload against the schema in force then:
// one that fails it enqueues nothing, uses up its run and says why.
func TestScheduleFireChecksTheSchemaInForce(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	s := b.createSchedule(map[string]any{"name": "tick", "queue": "ticks", "cron": "@every 1s", "payload": map[string]any{"amount": -3}})
	id := s["id"].(string)
	b.tick(clock, time.Second, id)
	require.Len(t, b.drainRuns("ticks"), 1)

	b.putQueue("ticks", map[string]any{"schema": paymentSchema})
	requireRefused(t, b.call("POST", "/api/v1/schedules/"+id+"/run", nil), "payload/amount", "minimum")
	b.tick(clock, time.Second, id)
	got := b.call("GET", "/api/v1/schedules/"+id, nil).Body
	require.Nil(t, got["last_job_id"])
	require.Equal(t, "payload/amount: minimum: got -3, want 0 (the queue's schema)", got["last_run_refused"])
	require.Empty(t, b.drainRuns("ticks"))

	// The schema relaxed: the next run enqueues, checked against it.
	b.putQueue("ticks", map[string]any{"schema": map[string]any{"type": "object"}})
	b.tick(clock, time.Second, id)
	got = b.call("GET", "/api/v1/schedules/"+id, nil).Body
	require.Nil(t, got["last_run_refused"])
	require.EqualValues(t, 2, b.job(got["last_job_id"].(string))["schema_version"])
}

// One namespace's schema is its own: another's queue of the same name
// takes any payload and cannot see it.
func TestQueueSchemaIsTenantIsolated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("payments", map[string]any{"schema": paymentSchema})
	other := "t_01hx0000000000000000000001/default"
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments", "payload": map[string]any{"amount": -1}},
		wire.ShardNamespaceHeader, other)
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("GET", "/api/v1/queues/payments", nil, wire.ShardNamespaceHeader, other)
	require.Equal(t, 200, r.Status)
	require.Nil(t, r.Body["schema"])
	require.EqualValues(t, 0, r.Body["schema_version"])
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments", "payload": map[string]any{"amount": -1}}),
		"payload/amount", "minimum")
}

// A schema changing while jobs are enqueued: every job is stored only
// while the version it was checked against is in force (a check that
// lost the race is checked again against the new one), so in creation
// order the versions jobs record never go back, and each payload
// satisfies its version.
func TestSchemaChangeRacingEnqueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	schemas := []map[string]any{{"required": []any{"a"}}, {"required": []any{"b"}}} // odd versions a, even b
	b.putQueue("q", map[string]any{"schema": schemas[0]})
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				field := []string{"a", "b"}[(i+w)%2]
				r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": map[string]any{field: i}})
				if r.Status != 201 && r.Status != 400 && !(r.Status == 409 && r.Body["error"].(map[string]any)["code"] == "schema_changed") {
					t.Errorf("enqueue: %d %s", r.Status, r.Raw)
					return
				}
			}
		}()
	}
	for i := 1; i <= 100; i++ {
		b.putQueue("q", map[string]any{"schema": schemas[i%2]})
	}
	close(done)
	wg.Wait()

	r := b.call("POST", "/api/v1/jobs/search", map[string]any{"queue": "q", "limit": 1000, "sort": "created_at", "order": "asc"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	jobs := r.Body["jobs"].([]any)
	require.NotEmpty(t, jobs)
	last := 0.0
	for _, x := range jobs {
		j := x.(map[string]any)
		v := j["schema_version"].(float64)
		require.GreaterOrEqual(t, v, last, "a job checked against an older version was stored after a newer one was in force")
		last = v
		want := map[bool]string{true: "a", false: "b"}[int(v)%2 == 1]
		require.Contains(t, j["payload"], want, j)
	}
}

// A backup carries a queue's schema and its version: the restored
// namespace checks payloads as the original did, and its jobs keep the
// versions they recorded.
func TestQueueSchemaSurvivesARestore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("payments", map[string]any{"schema": map[string]any{"type": "object"}})
	b.putQueue("payments", map[string]any{"schema": paymentSchema})
	id := b.enqueue(map[string]any{"queue": "payments", "payload": map[string]any{"amount": 1}})
	r := b.restoreInto(restoredNS, wire.RestoreNew, b.backupOf(testNS))
	require.Equal(t, 200, r.Status, string(r.Raw))
	q := b.call("GET", "/api/v1/queues/payments", nil, wire.ShardNamespaceHeader, restoredNS)
	require.EqualValues(t, 2, q.Body["schema_version"])
	j := b.call("GET", "/api/v1/jobs/"+id, nil, wire.ShardNamespaceHeader, restoredNS)
	require.EqualValues(t, 2, j.Body["schema_version"])
	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments", "payload": map[string]any{"amount": -1}},
		wire.ShardNamespaceHeader, restoredNS)
	requireRefused(t, r, "payload/amount", "minimum")
	// The next schema there takes the next version.
	r = b.call("PUT", "/api/v1/queues/payments", map[string]any{"schema": true}, wire.ShardNamespaceHeader, restoredNS)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 3, r.Body["schema_version"])
}

// A request repeated under its Idempotency-Key gets its first answer even
// when its payload fails the schema in force now (the schema changed
// since the first was stored); a new key is checked and refused.
func TestIdempotentRepeatOutlivesASchemaChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("payments", map[string]any{"schema": map[string]any{"type": "object"}})
	body := map[string]any{"queue": "payments", "payload": map[string]any{"amount": -1}}
	first := b.keyed(testNS, "POST", "/api/v1/enqueue", "order-1", body)
	require.Equal(t, 201, first.Status, string(first.Raw))
	batch := map[string]any{"jobs": []any{body}}
	firstBatch := b.keyed(testNS, "POST", "/api/v1/enqueue/batch", "batch-1", batch)
	require.Equal(t, 201, firstBatch.Status, string(firstBatch.Raw))

	b.putQueue("payments", map[string]any{"schema": paymentSchema})
	again := b.keyed(testNS, "POST", "/api/v1/enqueue", "order-1", body)
	require.Equal(t, 200, again.Status, string(again.Raw))
	require.Equal(t, "true", again.Header.Get(wire.IdempotencyReplayedHeader))
	require.Equal(t, string(first.Raw), string(again.Raw))
	again = b.keyed(testNS, "POST", "/api/v1/enqueue/batch", "batch-1", batch)
	require.Equal(t, 200, again.Status, string(again.Raw))
	require.Equal(t, string(firstBatch.Raw), string(again.Raw))

	requireRefused(t, b.keyed(testNS, "POST", "/api/v1/enqueue", "order-2", body), "payload/amount", "minimum")
	require.Equal(t, 2, b.jobCount())
}

// A schedule's create repeated under its Idempotency-Key after the schema
// changed gets its first answer too.
func TestIdempotentScheduleCreateOutlivesASchemaChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := map[string]any{"name": "s", "queue": "payments", "cron": "@hourly", "payload": map[string]any{"amount": -1}}
	first := b.keyed(testNS, "POST", "/api/v1/schedules", "sched-1", body)
	require.Equal(t, 201, first.Status, string(first.Raw))
	b.putQueue("payments", map[string]any{"schema": paymentSchema})
	again := b.keyed(testNS, "POST", "/api/v1/schedules", "sched-1", body)
	require.Equal(t, 200, again.Status, string(again.Raw))
	require.Equal(t, string(first.Raw), string(again.Raw))
	body["name"] = "t"
	requireRefused(t, b.keyed(testNS, "POST", "/api/v1/schedules", "sched-2", body), "payload/amount", "minimum")
}
