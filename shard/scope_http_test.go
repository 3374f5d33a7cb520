package shard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// Queue scopes (wire.QueueScopeHeader): a key of a custom role acts on the
// queues its patterns match and on nothing else. These tests call a node
// as the gateway does for such a key (withScope) and check, endpoint kind
// by endpoint kind, that what is in scope works, what names a queue
// outside is 403 naming the field with nothing changed, what names a job
// or schedule outside is the 404 of one that does not exist, and that no
// header is every queue.

// usage is what the namespace holds, read without a scope.
func (b *bundle) usage() map[string]any {
	b.t.Helper()
	r := b.call("GET", "/api/v1/namespace", nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	return r.Body
}

// forbidden asserts a 403 forbidden naming field.
func forbidden(t *testing.T, r resp, field string) {
	t.Helper()
	require.Equal(t, 403, r.Status, string(r.Raw))
	require.Equal(t, "forbidden", errCode(r))
	require.Equal(t, field, errField(r))
}

// errMessage is the message of an error answer.
func errMessage(r resp) string {
	e, _ := r.Body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// sameAsMissing asserts r is the 404 a missing id gets, word for word
// (the id aside): the caller learns nothing of what is out of scope.
func sameAsMissing(t *testing.T, r, missing resp, id, missingID string) {
	t.Helper()
	require.Equal(t, 404, r.Status, string(r.Raw))
	require.Equal(t, 404, missing.Status, string(missing.Raw))
	require.Equal(t, "not_found", errCode(r))
	require.Equal(t, strings.ReplaceAll(errMessage(missing), missingID, id), errMessage(r))
}

const missingJob = "job_01HX00000000000000000000ZZ"

func TestScopeRefusesQueuesItDoesNotHold(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.withScope("emails.*,reports.daily")
	before := b.usage()

	// Enqueue: the job's queue, its chain's, its batch's callback.
	require.Equal(t, 201, e.call("POST", "/api/v1/enqueue", map[string]any{"queue": "emails.send"}).Status)
	before["jobs"] = before["jobs"].(float64) + 1
	before["queues"] = before["queues"].(float64) + 1
	forbidden(t, e.call("POST", "/api/v1/enqueue", map[string]any{"queue": "billing"}), "queue")
	forbidden(t, e.call("POST", "/api/v1/enqueue", map[string]any{"queue": "emails", "payload": 1}), "queue") // emails.* is not emails
	chain := func(steps []map[string]any, extra map[string]any) map[string]any {
		c := map[string]any{"steps": steps}
		for k, v := range extra {
			c[k] = v
		}
		return map[string]any{"queue": "emails.send", "chain": c}
	}
	forbidden(t, e.call("POST", "/api/v1/enqueue", chain([]map[string]any{{"queue": "emails.send"}, {"queue": "billing"}}, nil)), "chain.steps[1].queue")
	forbidden(t, e.call("POST", "/api/v1/enqueue", chain([]map[string]any{{"queue": "emails.send"}},
		map[string]any{"on_failure": map[string]any{"queue": "billing"}})), "chain.on_failure.queue")
	forbidden(t, e.call("POST", "/api/v1/enqueue", chain([]map[string]any{{"queue": "emails.send"}},
		map[string]any{"on_exit": map[string]any{"queue": "reports.weekly"}})), "chain.on_exit.queue")
	jobs := []map[string]any{{"queue": "emails.send"}, {"queue": "reports.daily"}, {"queue": "billing"}}
	forbidden(t, e.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs}), "jobs[2].queue")
	forbidden(t, e.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs[:2],
		"batch": map[string]any{"callback_queue": "billing"}}), "batch.callback_queue")
	require.Equal(t, 201, e.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs[:2],
		"batch": map[string]any{"callback_queue": "emails.done"}}).Status)
	before["jobs"] = before["jobs"].(float64) + 2
	before["queues"] = before["queues"].(float64) + 1

	// Fetch: every queue asked for; the worker is not recorded with them.
	forbidden(t, e.fetch([]string{"emails.send", "billing"}, map[string]any{"worker_id": "w-out"}), "queues[1]")
	forbidden(t, e.fetchBatch([]string{"billing"}, map[string]any{"worker_id": "w-out"}), "queues[0]")
	require.NotContains(t, string(b.call("GET", "/api/v1/workers", nil).Raw), "w-out")

	// Schedules: the schedule's queue, on create and on replace.
	s := map[string]any{"name": "nightly", "queue": "billing", "cron": "@every 60s"}
	forbidden(t, e.call("POST", "/api/v1/schedules", s), "queue")
	s["queue"] = "reports.daily"
	require.Equal(t, 201, e.call("POST", "/api/v1/schedules", s).Status)
	before["schedules"] = before["schedules"].(float64) + 1
	s["queue"] = "billing"
	forbidden(t, e.call("PUT", "/api/v1/schedules/nightly", s), "queue")
	require.Equal(t, "reports.daily", b.call("GET", "/api/v1/schedules/nightly", nil).Body["queue"])

	// Every route of a queue outside, whatever it does.
	b.putQueue("billing", map[string]any{"description": "money"})
	before["queues"] = before["queues"].(float64) + 1
	for _, r := range []struct{ method, path string }{
		{"GET", ""}, {"PUT", ""}, {"DELETE", "?confirm=true"}, {"POST", "/pause"}, {"POST", "/resume"}, {"POST", "/drain"},
		{"POST", "/clear"}, {"POST", "/concurrency"}, {"DELETE", "/concurrency"}, {"POST", "/throttle"},
		{"DELETE", "/throttle"}, {"POST", "/defaults"},
	} {
		forbidden(t, e.call(r.method, "/api/v1/queues/billing"+r.path, map[string]any{"max": 1}), "queue")
	}
	q := b.queueView("billing")
	require.Equal(t, false, q["paused"])
	require.Equal(t, "money", q["description"])
	require.Equal(t, 200, e.call("POST", "/api/v1/queues/emails.send/pause", nil).Status, "a queue in scope")
	require.Equal(t, true, b.queueView("emails.send")["paused"])

	// A move's target, a bulk's target and filter, a search's and a dead
	// list's queue.
	id := b.enqueue(map[string]any{"queue": "emails.bounce"})
	before["jobs"] = before["jobs"].(float64) + 1
	before["queues"] = before["queues"].(float64) + 1
	forbidden(t, e.call("POST", "/api/v1/jobs/"+id+"/move", map[string]any{"queue": "billing"}), "queue")
	require.Equal(t, "emails.bounce", b.job(id)["queue"])
	forbidden(t, e.bulk(map[string]any{"job_ids": []string{id}, "action": "move", "move_to_queue": "billing"}), "move_to_queue")
	forbidden(t, e.bulk(map[string]any{"filter": map[string]any{"queue": "billing"}, "action": "cancel"}), "filter.queue")
	forbidden(t, e.call("POST", "/api/v1/jobs/search", map[string]any{"queue": "billing"}), "queue")
	forbidden(t, e.call("GET", "/api/v1/dead?queue=billing", nil), "queue")

	// The namespace as a whole needs every queue.
	forbidden(t, e.call("GET", "/api/v1/namespace", nil), wire.QueueScopeHeader)
	forbidden(t, e.call("DELETE", "/api/v1/namespace", nil), wire.QueueScopeHeader)
	forbidden(t, e.call("PUT", "/api/v1/namespace", map[string]any{"retention": "1m"}), wire.QueueScopeHeader)

	require.Equal(t, before, b.usage(), "nothing refused left anything")

	// Present but empty: no queue at all. Absent: every queue.
	none := b.withScope("")
	forbidden(t, none.call("POST", "/api/v1/enqueue", map[string]any{"queue": "emails.send"}), "queue")
	forbidden(t, none.call("GET", "/api/v1/queues/emails.send", nil), "queue")
	require.Equal(t, 201, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "billing"}).Status)
	require.Equal(t, 200, b.withScope("*").call("GET", "/api/v1/queues/billing", nil).Status, `"*" is every queue`)
}

func TestScopeHidesJobsOfOtherQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.withScope("emails.*")
	mine := b.enqueue(map[string]any{"queue": "emails.send"})
	other := b.enqueue(map[string]any{"queue": "billing", "max_retries": 0})
	missing := func(method, path string, body any) resp {
		return b.call(method, strings.ReplaceAll(path, "ID", missingJob), body)
	}
	hidden := func(method, path string, body any) {
		t.Helper()
		sameAsMissing(t, e.call(method, strings.ReplaceAll(path, "ID", other), body), missing(method, path, body), other, missingJob)
	}

	// Read, and manage, by id.
	require.Equal(t, 200, e.call("GET", "/api/v1/jobs/"+mine, nil).Status)
	hidden("GET", "/api/v1/jobs/ID", nil)
	hidden("POST", "/api/v1/jobs/ID/cancel", nil)
	hidden("POST", "/api/v1/jobs/ID/move", map[string]any{"queue": "emails.other"})
	hidden("DELETE", "/api/v1/jobs/ID", nil)
	sameAsMissing(t, b.withScope("").call("GET", "/api/v1/jobs/"+mine, nil), missing("GET", "/api/v1/jobs/ID", nil), mine, missingJob)
	require.Equal(t, "pending", b.job(other)["state"], "nothing happened to it")

	// A worker's calls on a job it holds in a queue outside.
	f := b.fetch([]string{"billing"}, nil)
	require.Equal(t, 200, f.Status, string(f.Raw))
	lease := b.job(other)["lease_expires_at"]
	hidden("POST", "/api/v1/ack/ID", map[string]any{"worker_id": "w1"})
	hidden("POST", "/api/v1/fail/ID", map[string]any{"worker_id": "w1", "error": "x"})
	hb := e.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w1", "jobs": map[string]any{other: map[string]any{"progress": 1}}})
	require.Equal(t, 200, hb.Status, string(hb.Raw))
	require.Equal(t, map[string]any{other: map[string]any{"status": wire.HeartbeatLost}}, hb.Body["jobs"])
	ab := e.call("POST", "/api/v1/ack/batch", map[string]any{"worker_id": "w1", "acks": []map[string]any{{"job_id": other}, {"job_id": missingJob}}})
	require.Equal(t, 200, ab.Status, string(ab.Raw))
	res := ab.Body["results"].([]any)
	require.Equal(t, res[1].(map[string]any)["error"].(map[string]any)["code"], res[0].(map[string]any)["error"].(map[string]any)["code"])
	rel := e.call("POST", "/api/v1/release", map[string]any{"worker_id": "w1", "jobs": []map[string]any{{"job_id": other, "attempt": 1}}})
	require.Equal(t, 200, rel.Status, string(rel.Raw))
	require.Empty(t, rel.Body["released"])
	d := b.job(other)
	require.Equal(t, "active", d["state"], "still leased, unchanged")
	require.Equal(t, lease, d["lease_expires_at"])
	require.Nil(t, d["progress"])

	// Its worker, with every queue, finishes it; retry by id is hidden too.
	require.Equal(t, 200, b.call("POST", "/api/v1/fail/"+other, map[string]any{"worker_id": "w1", "error": "x"}).Status)
	hidden("POST", "/api/v1/jobs/ID/retry", nil)
	require.Equal(t, "dead", b.job(other)["state"])

	// In scope, a worker's round trip and a move within the scope work.
	f = e.fetch([]string{"emails.send"}, map[string]any{"worker_id": "w2"})
	require.Equal(t, mine, f.Body["job_id"])
	hb = e.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w2", "jobs": map[string]any{mine: map[string]any{}}})
	require.Equal(t, map[string]any{mine: map[string]any{"status": wire.HeartbeatOK}}, hb.Body["jobs"])
	require.Equal(t, 200, e.call("POST", "/api/v1/ack/"+mine, map[string]any{"worker_id": "w2"}).Status)
	require.Equal(t, 200, e.call("POST", "/api/v1/jobs/"+mine+"/retry", nil).Status)
	require.Equal(t, 200, e.call("POST", "/api/v1/jobs/"+mine+"/move", map[string]any{"queue": "emails.other"}).Status)

	// Bulk by ids: a job outside fails as an unknown id does.
	r := e.bulk(map[string]any{"job_ids": []string{other, mine, missingJob}, "action": "cancel"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 1.0, r.Body["affected"])
	require.Equal(t, 2.0, r.Body["errors"])
	fs := r.Body["failures"].([]any)
	require.Len(t, fs, 2)
	require.Equal(t, map[string]any{"job_id": other, "error": "job " + other + " not found"}, fs[0], "in request order")
	require.Equal(t, map[string]any{"job_id": missingJob, "error": "job " + missingJob + " not found"}, fs[1])
	require.Equal(t, "dead", b.job(other)["state"])

	// depends_on a job outside reads as a job that does not exist.
	dep := e.call("POST", "/api/v1/enqueue", map[string]any{"queue": "emails.send", "depends_on": []string{other}})
	noDep := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "emails.send", "depends_on": []string{missingJob}})
	require.Equal(t, 400, dep.Status, string(dep.Raw))
	require.Equal(t, errField(noDep), errField(dep))
	require.Equal(t, strings.ReplaceAll(errMessage(noDep), missingJob, other), errMessage(dep))

	// Batches: one with a job outside is not found.
	mixed := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []map[string]any{{"queue": "emails.send"}, {"queue": "billing"}},
		"batch": map[string]any{"callback_queue": "emails.done"}})
	own := e.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []map[string]any{{"queue": "emails.send"}},
		"batch": map[string]any{"callback_queue": "emails.done"}})
	require.Equal(t, 201, mixed.Status, string(mixed.Raw))
	require.Equal(t, 201, own.Status, string(own.Raw))
	mb, ob := mixed.Body["batch_id"].(string), own.Body["batch_id"].(string)
	require.Equal(t, 200, e.call("GET", "/api/v1/batches/"+ob, nil).Status)
	require.Equal(t, 200, b.call("GET", "/api/v1/batches/"+mb, nil).Status)
	r = e.call("GET", "/api/v1/batches/"+mb, nil)
	require.Equal(t, 404, r.Status, string(r.Raw))
	require.Equal(t, "batch "+mb+" not found", errMessage(r))
}

func TestScopeHidesSchedulesOfOtherQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.withScope("reports.*")
	theirs := b.createSchedule(map[string]any{"name": "charge", "queue": "billing", "cron": "@every 60s"})
	mine := b.createSchedule(map[string]any{"name": "daily", "queue": "reports.daily", "cron": "@every 60s"})
	body := map[string]any{"name": "charge", "queue": "reports.daily", "cron": "@every 120s"}
	const missingID = "sch_01HX00000000000000000000ZZ"
	for _, ref := range []struct{ ref, missing string }{{theirs["id"].(string), missingID}, {"charge", "no-such"}} {
		for _, c := range []struct {
			method, path string
			body         any
		}{{"GET", "", nil}, {"PUT", "", body}, {"DELETE", "", nil}, {"POST", "/enable", nil}, {"POST", "/disable", nil}} {
			r := e.call(c.method, "/api/v1/schedules/"+ref.ref+c.path, c.body)
			m := b.call(c.method, "/api/v1/schedules/"+ref.missing+c.path, c.body)
			sameAsMissing(t, r, m, ref.ref, ref.missing)
		}
	}
	got := b.call("GET", "/api/v1/schedules/charge", nil).Body
	require.Equal(t, theirs["cron"], got["cron"], "unchanged")
	require.Equal(t, true, got["enabled"])

	require.Equal(t, 200, e.call("GET", "/api/v1/schedules/daily", nil).Status)
	require.Equal(t, 200, e.call("POST", "/api/v1/schedules/"+mine["id"].(string)+"/disable", nil).Status)
	list := e.call("GET", "/api/v1/schedules", nil).Body["schedules"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, "daily", list[0].(map[string]any)["name"])
	require.Len(t, b.call("GET", "/api/v1/schedules", nil).Body["schedules"], 2)
	require.Empty(t, b.withScope("").call("GET", "/api/v1/schedules", nil).Body["schedules"])
	require.Equal(t, 204, e.call("DELETE", "/api/v1/schedules/daily", nil).Status)
}
