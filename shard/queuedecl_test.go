package shard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// settings is the part of a queue a PUT sets: what a GET must give back.
func settings(q map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"description", "paused", "concurrency", "throttle", "defaults"} {
		v, ok := q[k]
		if !ok {
			panic("the queue has no " + k)
		}
		out[k] = v
	}
	return out
}

func (b *bundle) putQueue(name string, spec any) map[string]any {
	b.t.Helper()
	r := b.call("PUT", "/api/v1/queues/"+name, spec)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	return r.Body
}

// noDefaults is the defaults object of a queue that sets none.
var noDefaults = map[string]any{"max_retries": nil, "retry_backoff": nil, "retry_base_delay": nil, "retry_max_delay": nil,
	"lease_duration": nil, "expire_after": nil, "retention": nil}

// A PUT reads back as it was sent, durations in their one canonical form
// ("60s" and 60 read "1m", "90s" reads "1m30s"); putting what was read
// changes nothing.
func TestQueuePutRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t)
	put := b.putQueue("emails.send", map[string]any{
		"description": "Outbound email\n(transactional)", "paused": true, "concurrency": 5,
		"throttle": map[string]any{"rate": 100, "period": "60s"},
		"defaults": map[string]any{"max_retries": 5, "retry_backoff": "linear", "retry_base_delay": 90, "retry_max_delay": "3600s",
			"lease_duration": "300s", "expire_after": "1440m", "retention": "72h"},
	})
	want := map[string]any{
		"description": "Outbound email\n(transactional)", "paused": true, "concurrency": 5.0,
		"throttle": map[string]any{"rate": 100.0, "period": "1m"},
		"defaults": map[string]any{"max_retries": 5.0, "retry_backoff": "linear", "retry_base_delay": "1m30s", "retry_max_delay": "1h",
			"lease_duration": "5m", "expire_after": "24h", "retention": "72h"},
	}
	require.Equal(t, want, settings(put))
	got := b.queueView("emails.send")
	require.Equal(t, want, settings(got))
	require.Equal(t, "emails.send", got["name"])
	require.Contains(t, got, "counts")

	// What was read goes back unchanged, as often as it is sent.
	for range 2 {
		require.Equal(t, want, settings(b.putQueue("emails.send", settings(got))))
		require.Equal(t, want, settings(b.queueView("emails.send")))
	}
	list := b.call("GET", "/api/v1/queues", nil)
	require.Equal(t, want, settings(list.Body["queues"].([]any)[0].(map[string]any)))
}

// A PUT replaces the whole configuration: what it leaves out is reset.
func TestQueuePutReplacesEverything(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("q", map[string]any{"description": "x", "paused": true, "concurrency": 2,
		"throttle": map[string]any{"rate": 1, "period": 1}, "defaults": map[string]any{"max_retries": 1}})
	empty := map[string]any{"description": "", "paused": false, "concurrency": nil, "throttle": nil, "defaults": noDefaults}
	require.Equal(t, empty, settings(b.putQueue("q", map[string]any{})))
	require.Equal(t, empty, settings(b.queueView("q")))

	b.putQueue("q", map[string]any{"defaults": map[string]any{"max_retries": 1, "retention": "1h"}})
	r := b.putQueue("q", map[string]any{"description": "only this", "defaults": map[string]any{"retention": "2h"}})
	d := r["defaults"].(map[string]any)
	require.Nil(t, d["max_retries"], "a default left out is reset")
	require.Equal(t, "2h", d["retention"])
	require.Equal(t, "only this", r["description"])
	r = b.putQueue("q", map[string]any{"description": nil, "concurrency": nil, "throttle": nil, "defaults": nil})
	require.Equal(t, empty, settings(r), "null is the same as left out")
}

// Every field is checked, a 400 names it, and a refused PUT changes nothing.
func TestQueuePutRefusesBadFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("q", map[string]any{"description": "kept", "concurrency": 3, "defaults": map[string]any{"max_retries": 2}})
	before := b.queueView("q")
	d := func(k string, v any) map[string]any { return map[string]any{"defaults": map[string]any{k: v}} }
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"description": strings.Repeat("é", 1025)}, "description"},
		{map[string]any{"description": "bell\a"}, "description"},
		{map[string]any{"description": 5}, "description"},
		{map[string]any{"paused": "yes"}, "paused"},
		{map[string]any{"concurrency": 0}, "concurrency"},
		{map[string]any{"concurrency": 1.5}, "concurrency"},
		{map[string]any{"concurrency": "1"}, "concurrency"},
		{map[string]any{"concurrency": 2_000_000}, "concurrency"},
		{map[string]any{"throttle": map[string]any{"rate": 0, "period": "1m"}}, "throttle.rate"},
		{map[string]any{"throttle": map[string]any{"period": "1m"}}, "throttle.rate"},
		{map[string]any{"throttle": map[string]any{"rate": 5}}, "throttle.period"},
		{map[string]any{"throttle": map[string]any{"rate": 5, "period": "1ms"}}, "throttle.period"},
		{map[string]any{"throttle": map[string]any{"rate": 5, "period": "soon"}}, "throttle.period"},
		{map[string]any{"throttle": "fast"}, "throttle"},
		{d("max_retries", -1), "defaults.max_retries"},
		{d("retry_backoff", "wild"), "defaults.retry_backoff"},
		{d("retry_base_delay", "soon"), "defaults.retry_base_delay"},
		{d("retry_max_delay", "800h"), "defaults.retry_max_delay"},
		{map[string]any{"defaults": map[string]any{"retry_base_delay": "1m", "retry_max_delay": "1s"}}, "defaults.retry_max_delay"},
		{d("lease_duration", "1ms"), "defaults.lease_duration"},
		{d("expire_after", "0s"), "defaults.expire_after"},
		{d("expire_after", -5), "defaults.expire_after"},
		{d("retention", "1s"), "defaults.retention"},
		{map[string]any{"bogus": 1}, "bogus"},
		{map[string]any{"name": "q"}, "name"},
	} {
		r := b.call("PUT", "/api/v1/queues/q", c.body)
		require.Equal(t, 400, r.Status, "%v: %s", c.body, r.Raw)
		require.Equal(t, c.field, errField(r), "%v: %s", c.body, r.Raw)
	}
	r := b.call("PUT", "/api/v1/queues/bad%20name", map[string]any{})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "queue", errField(r))
	require.Equal(t, 400, b.call("PUT", "/api/v1/queues/q", "").Status, "a replace needs a body, {} at least")
	require.Equal(t, 400, b.call("PUT", "/api/v1/queues/q", "[]").Status)

	after := b.queueView("q")
	require.Equal(t, settings(before), settings(after), "nothing changed")
	require.Equal(t, strings.Repeat("é", 1024), b.putQueue("q", map[string]any{"description": strings.Repeat("é", 1024)})["description"])
}

// A queue known only from its jobs reads with no settings: the same shape.
func TestQueueKnownFromEnqueuesReadsItsDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.enqueue(map[string]any{"queue": "fresh"})
	q := b.queueView("fresh")
	require.Equal(t, map[string]any{"description": "", "paused": false, "concurrency": nil, "throttle": nil, "defaults": noDefaults}, settings(q))
	require.EqualValues(t, 1, q["counts"].(map[string]any)["pending"])
	// A PUT keeps its jobs.
	q = b.putQueue("fresh", map[string]any{"description": "now declared"})
	require.EqualValues(t, 1, q["counts"].(map[string]any)["pending"])
}

// The older endpoints keep working, and what they set shows in GET and is
// what a PUT replaces.
func TestQueueSettingEndpointsShowInGet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/q/pause", nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/q/concurrency", map[string]any{"max": 4}).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/q/throttle", map[string]any{"rate": 10, "period": 60}).Status)
	r := b.call("POST", "/api/v1/queues/q/defaults", map[string]any{"expire_after": "3600s", "max_retries": 0})
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/queues/q/defaults", map[string]any{"expire_after": "0s"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "expire_after", errField(r))
	want := map[string]any{"description": "", "paused": true, "concurrency": 4.0, "throttle": map[string]any{"rate": 10.0, "period": "1m"},
		"defaults": map[string]any{"max_retries": 0.0, "retry_backoff": nil, "retry_base_delay": nil, "retry_max_delay": nil,
			"lease_duration": nil, "expire_after": "1h", "retention": nil}}
	require.Equal(t, want, settings(b.queueView("q")))
	require.Equal(t, want, settings(b.putQueue("q", want)), "the same configuration again")

	// The queue's expire_after goes to the jobs that leave theirs out.
	own := b.job(b.enqueue(map[string]any{"queue": "q", "expire_after": "5m"}))
	require.Equal(t, "5m", own["expire_after"])
	dflt := b.job(b.enqueue(map[string]any{"queue": "q"}))
	require.Equal(t, "1h", dflt["expire_after"])
	require.NotNil(t, dflt["expires_at"])
	require.EqualValues(t, 0, dflt["max_retries"])

	require.Equal(t, 200, b.call("POST", "/api/v1/queues/q/resume", nil).Status)
	require.Equal(t, false, b.queueView("q")["paused"])
}

// A chain step that names no expire_after takes its queue's, like an
// enqueue that leaves it out; one that names it keeps its own.
func TestQueueExpireAfterDefaultsChainSteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putQueue("step", map[string]any{"defaults": map[string]any{"expire_after": "2h"}})
	for _, c := range []struct {
		step map[string]any
		want string
	}{
		{map[string]any{"queue": "step"}, "2h"},
		{map[string]any{"queue": "step", "expire_after": "5m"}, "5m"},
	} {
		b.enqueue(map[string]any{"queue": "first", "chain": map[string]any{"steps": []map[string]any{{"queue": "first"}, c.step}}})
		f := b.fetch([]string{"first"}, nil)
		require.Equal(t, 200, f.Status, string(f.Raw))
		require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
		next := b.fetch([]string{"step"}, nil)
		require.Equal(t, 200, next.Status, string(next.Raw))
		require.Equal(t, c.want, b.job(next.Body["job_id"].(string))["expire_after"])
	}
}
