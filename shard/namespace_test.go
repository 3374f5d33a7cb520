package shard

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

const otherTestNS = "t_01hx0000000000000000000002/default"

// in is b calling in namespace ns.
func (b *bundle) in(ns string) *nsCaller { return &nsCaller{b, ns} }

type nsCaller struct {
	b  *bundle
	ns string
}

func (n *nsCaller) call(method, path string, body any) resp {
	n.b.t.Helper()
	return n.b.call(method, path, body, wire.ShardNamespaceHeader, n.ns)
}

func (n *nsCaller) ok(method, path string, body any, status int) resp {
	n.b.t.Helper()
	r := n.call(method, path, body)
	// A group's election can come again on a loaded machine: a node that
	// knows no leader proposed nothing, so the call is made again once
	// one is elected (within a generous bound); a read is made again on
	// any 503 that says it may be, as the client does (one that makes what
	// it reads, such as a namespace's first signing key, is answered
	// "unavailable" when the lead moved meanwhile).
	again := func(r resp) bool {
		return r.Status == 503 && (errCode(r) == "no_leader" || (method == "GET" && r.Header.Get("Retry-After") != "" && errCode(r) == "unavailable"))
	}
	for deadline := time.Now().Add(30 * time.Second); again(r) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		r = n.call(method, path, body)
	}
	require.Equal(n.b.t, status, r.Status, "%s %s: %s", method, path, r.Raw)
	return r
}

// fill gives the namespace a bit of everything: jobs in every state (one
// with attempts and errors, one held on a dependency, a batch, a chain, a
// unique one), configured queues, schedules and a bulk operation.
func (n *nsCaller) fill() {
	n.b.t.Helper()
	n.ok("PUT", "/api/v1/queues/emails", map[string]any{"description": "e", "concurrency": 2,
		"defaults": map[string]any{"expire_after": "1h"}}, 200)
	first := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "emails", "unique_key": "u", "tags": map[string]string{"k": "v"}}, 201)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "reports", "depends_on": []string{first.Body["job_id"].(string)}}, 201)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "later", "scheduled_at": "2030-01-01T00:00:00Z"}, 201)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "ai", "chain": map[string]any{
		"steps": []map[string]any{{"queue": "ai"}, {"queue": "ai2"}}}}, 201)
	n.ok("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []map[string]any{{"queue": "img"}, {"queue": "img"}},
		"batch": map[string]any{"callback_queue": "img.done"}}, 201)
	for _, q := range []string{"img", "ai"} {
		f := n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{q}, "worker_id": "w", "timeout": 0}, 200)
		n.ok("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{"result": map[string]int{"ok": 1}}, 200)
	}
	dead := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "fragile", "max_retries": 0}, 201).Body["job_id"].(string)
	n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"fragile"}, "worker_id": "w", "timeout": 0}, 200)
	n.ok("POST", "/api/v1/fail/"+dead, map[string]any{"error": "boom"}, 200)
	n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"img"}, "worker_id": "w", "timeout": 0}, 200) // stays active
	n.ok("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "reports", "cron": "0 3 * * *"}, 201)
	n.ok("POST", "/api/v1/schedules", map[string]any{"name": "hourly", "queue": "reports", "cron": "@hourly", "enabled": false}, 201)
	n.ok("POST", "/api/v1/jobs/bulk", map[string]any{"action": "change_priority", "priority": "high",
		"filter": map[string]any{"queue": "later"}}, 200)
}

// dump is every key and value of ns in the node's store, and its registry
// entry.
func (b *bundle) dump(ns string) []byte { return b.dumpWithout(ns, nil) }

// dumpRequests is dump without the queue history, for "a refused request
// changes nothing": the leader samples a busy queue's depth into its
// history on its own timer, whatever the requests do.
func (b *bundle) dumpRequests(ns string) []byte { return b.dumpWithout(ns, keys.HistoryPrefix(ns)) }

func (b *bundle) dumpWithout(ns string, skip []byte) []byte {
	b.t.Helper()
	db := b.srv.repl.DB()
	var buf bytes.Buffer
	p := keys.Namespace(ns)
	it, err := db.NewIter(nil)
	require.NoError(b.t, err)
	for ok := it.First(); ok; ok = it.Next() {
		if skip != nil && bytes.HasPrefix(it.Key(), skip) {
			continue
		}
		if bytes.HasPrefix(it.Key(), p) || bytes.Equal(it.Key(), keys.Registry(ns)) {
			fmt.Fprintf(&buf, "%x=%x\n", it.Key(), it.Value())
		}
	}
	require.NoError(b.t, it.Close())
	return buf.Bytes()
}

func (n *nsCaller) usage() map[string]any {
	n.b.t.Helper()
	return n.ok("GET", "/api/v1/namespace", nil, 200).Body
}

// GET /api/v1/namespace counts a namespace's jobs, queues and schedules;
// DELETE removes all of it, and another namespace keeps every byte.
func TestNamespaceUsageAndDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mine, other := b.in(testNS), b.in(otherTestNS)
	require.Equal(t, map[string]any{"jobs": 0.0, "queues": 0.0, "schedules": 0.0, "retention": nil}, mine.usage())
	mine.fill()
	other.fill()
	// Jobs in emails, reports (held), later, ai (done) and ai2 (the chain's
	// second step), img (two: the batch waits on the active one), fragile
	// (dead).
	want := map[string]any{"jobs": 8.0, "queues": 7.0, "schedules": 2.0, "retention": nil}
	require.Equal(t, want, mine.usage())
	require.Equal(t, want, other.usage())
	require.Len(t, mine.ok("GET", "/api/v1/dead", nil, 200).Body["jobs"], 1)
	before := b.dumpRequests(otherTestNS)
	require.NotEmpty(t, b.dump(testNS))

	r := mine.call("DELETE", "/api/v1/namespace", nil)
	require.Equal(t, 204, r.Status, string(r.Raw))
	require.Empty(t, r.Raw)
	require.Empty(t, b.dump(testNS), "no key of the namespace is left, nor its registry entry")
	require.False(t, slices.Contains(engine.Namespaces(b.srv.repl.DB()), testNS))
	require.Equal(t, map[string]any{"jobs": 0.0, "queues": 0.0, "schedules": 0.0, "retention": nil}, mine.usage())
	require.Empty(t, mine.ok("GET", "/api/v1/queues", nil, 200).Body["queues"])
	require.Empty(t, mine.ok("GET", "/api/v1/schedules", nil, 200).Body["schedules"])
	require.Empty(t, mine.ok("GET", "/api/v1/dead", nil, 200).Body["jobs"])
	mine.ok("GET", "/api/v1/schedules/nightly", nil, 404)

	require.Equal(t, string(before), string(b.dumpRequests(otherTestNS)), "another namespace is untouched, byte for byte")
	require.Equal(t, want, other.usage())

	// Deleting again, or an empty namespace, is fine; the namespace can be
	// used afresh, with nothing of before.
	mine.ok("DELETE", "/api/v1/namespace", nil, 204)
	mine.ok("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "reports", "cron": "0 3 * * *"}, 201)
	mine.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "emails", "unique_key": "u"}, 201)
	q := mine.ok("GET", "/api/v1/queues/emails", nil, 200).Body
	require.Equal(t, "", q["description"])
	require.Nil(t, q["concurrency"])
	require.Equal(t, map[string]any{"jobs": 1.0, "queues": 1.0, "schedules": 1.0, "retention": nil}, mine.usage())

	r = b.call("DELETE", "/api/v1/namespace", nil, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
	r = b.call("GET", "/api/v1/namespace", nil, wire.ShardNamespaceHeader, "nonsense")
	require.Equal(t, 400, r.Status)
}

// A namespace of thousands of jobs is deleted in many bounded steps.
func TestNamespaceDeleteOfManyJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mine := b.in(testNS)
	jobs := make([]map[string]any, wire.MaxBatchJobs)
	for i := range jobs {
		jobs[i] = map[string]any{"queue": fmt.Sprint("q", i%7), "tags": map[string]string{"i": fmt.Sprint(i)}}
	}
	for range 3 {
		mine.ok("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs}, 201)
	}
	other := b.in(otherTestNS)
	other.ok("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs[:10]}, 201)
	require.EqualValues(t, 3000, mine.usage()["jobs"])
	applied := b.srv.repl.AppliedIndex()
	mine.ok("DELETE", "/api/v1/namespace", nil, 204)
	require.GreaterOrEqual(t, b.srv.repl.AppliedIndex()-applied, uint64(4), "three steps of a thousand jobs, then the rest")
	require.Empty(t, b.dump(testNS))
	require.EqualValues(t, 10, other.usage()["jobs"])
}

// PUT /api/v1/namespace sets the namespace's retention: a job finishing
// after it is kept that long unless its queue's defaults say otherwise,
// while another namespace keeps the node's; null resets it, and a
// namespace delete removes it.
func TestNamespaceRetention(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	mine, other := b.in(testNS), b.in(otherTestNS)
	for _, body := range []string{`{"retention":"30s"}`, `{"retention":"87601h"}`, `{"retention":"soon"}`, `{"retention":true}`, `{}`} {
		r := mine.call("PUT", "/api/v1/namespace", []byte(body))
		require.Equal(t, 400, r.Status, "%s: %s", body, r.Raw)
		require.Equal(t, "retention", errField(r), "%s: %s", body, r.Raw)
	}
	require.Equal(t, 400, mine.call("PUT", "/api/v1/namespace", []byte(`{"retention":"1h","extra":1}`)).Status)
	require.Nil(t, mine.usage()["retention"], "nothing refused was stored")

	require.Equal(t, "1m", mine.ok("PUT", "/api/v1/namespace", map[string]any{"retention": "60s"}, 200).Body["retention"])
	require.Equal(t, "1m", mine.usage()["retention"])
	require.Nil(t, other.usage()["retention"])
	mine.ok("PUT", "/api/v1/queues/kept", map[string]any{"defaults": map[string]any{"retention": "1h"}}, 200)

	finish := func(n *nsCaller, queue string) string {
		t.Helper()
		id := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": queue}, 201).Body["job_id"].(string)
		n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{queue}, "worker_id": "w", "timeout": 0}, 200)
		n.ok("POST", "/api/v1/ack/"+id, nil, 200)
		return id
	}
	short, kept, theirs := finish(mine, "q"), finish(mine, "kept"), finish(other, "q")
	clock.Advance(30 * time.Second)
	time.Sleep(100 * time.Millisecond) // a sweep may run: nothing is due yet
	mine.ok("GET", "/api/v1/jobs/"+short, nil, 200)
	eventually(t, 5*time.Second, func() bool {
		clock.Advance(10 * time.Second)
		return mine.call("GET", "/api/v1/jobs/"+short, nil).Status == 404
	}, "the namespace's retention prunes its completed job after 1m")
	mine.ok("GET", "/api/v1/jobs/"+kept, nil, 200)    // the queue's 1h comes first
	other.ok("GET", "/api/v1/jobs/"+theirs, nil, 200) // the node's 7 days

	// Null resets it; a delete removes it.
	require.Nil(t, mine.ok("PUT", "/api/v1/namespace", map[string]any{"retention": nil}, 200).Body["retention"])
	mine.ok("PUT", "/api/v1/namespace", map[string]any{"retention": "168h"}, 200)
	mine.ok("DELETE", "/api/v1/namespace", nil, 204)
	require.Nil(t, mine.usage()["retention"])
	require.Empty(t, b.dump(testNS))
}
