package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// conformance checks real answers of a running gateway against the
// OpenAPI document it serves: each answer's status must be one the
// document gives the operation, with its content type, body and headers
// as it says; each call the test means to succeed must also be a request
// the document accepts.
type conformance struct {
	t    *testing.T
	v    validator.Validator
	base string
}

func newConformance(t *testing.T, base string) *conformance {
	r := call(t, http.MethodGet, base+"/api/v1/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.Status, "the gateway serves its OpenAPI document without a key: %s", r.Raw)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	doc, err := libopenapi.NewDocument(r.Raw)
	require.NoError(t, err)
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)
	return &conformance{t: t, v: v, base: base}
}

// do sends method path (body JSON unless a string) with key and headers
// (name, value pairs), requires status, validates the exchange against
// the document and returns the answer.
func (c *conformance) do(status int, method, path, key string, body any, hdr ...string) reply {
	t := c.t
	t.Helper()
	var raw []byte
	switch v := body.(type) {
	case nil:
	case string:
		raw = []byte(v)
	default:
		var err error
		raw, err = json.Marshal(v)
		require.NoError(t, err)
	}
	req := c.request(method, path, key, raw, hdr...)
	if status < 300 {
		ok, problems := c.v.ValidateHttpRequest(c.request(method, path, key, raw, hdr...))
		require.True(t, ok, "%s %s: the document refuses a request the server serves: %s", method, path, describe(problems))
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, status, res.StatusCode, "%s %s: %s", method, path, got)
	c.check(req, res, got)
	out := reply{Status: res.StatusCode, Header: res.Header, Raw: got}
	if len(got) > 0 && got[0] == '{' {
		require.NoError(t, json.Unmarshal(got, &out.Body))
	}
	return out
}

// check validates an answer (its body already read) against the document.
func (c *conformance) check(req *http.Request, res *http.Response, body []byte) {
	c.t.Helper()
	if res.StatusCode == http.StatusNoContent {
		require.Empty(c.t, body, "%s %s: a 204 has no body", req.Method, req.URL.Path)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	ok, problems := c.v.ValidateHttpResponse(req, res)
	require.True(c.t, ok, "%s %s answered %d, which the document does not describe: %s\nbody: %s",
		req.Method, req.URL.Path, res.StatusCode, describe(problems), body)
}

func (c *conformance) request(method, path, key string, body []byte, hdr ...string) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

func describe(problems []*verrors.ValidationError) string {
	var b strings.Builder
	for _, p := range problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.Message, p.Reason)
		for _, f := range p.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    at %s: %s", f.FieldPath, f.Reason)
		}
	}
	return b.String()
}

// Real answers of every resource family, and the errors a client meets,
// are as the OpenAPI document describes them: an answer it does not
// describe (a status, a content type, a field, a missing field) fails.
func TestOpenAPIDescribesRealAnswers(t *testing.T) {
	t.Parallel()
	c := newConformance(t, shared.gateway)
	_, ct := shared.tenant(t)
	key := ct.OwnerKey

	// Jobs and work: enqueue, batch, fetch (a job, and the 204 of a wait
	// that ends with none), ack, fail, heartbeat, a job, search, bulk.
	one := c.do(201, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "oa", "payload": map[string]any{"n": 1}, "tags": map[string]string{"k": "v"}})
	c.do(201, "POST", "/api/v1/enqueue/batch", key, map[string]any{"jobs": []any{map[string]any{"queue": "oa"}, map[string]any{"queue": "oa", "priority": "high"}}})
	c.do(201, "POST", "/api/v1/enqueue/batch", key, map[string]any{"jobs": []any{map[string]any{"queue": "oa-b"}},
		"batch": map[string]any{"callback_queue": "oa-cb", "callback_payload": map[string]any{"k": 1}}})
	job := c.do(200, "POST", "/api/v1/fetch", key, map[string]any{"queues": []string{"oa"}, "worker_id": "w1", "timeout": 0})
	c.do(200, "POST", "/api/v1/heartbeat", key, map[string]any{"worker_id": "w1", "jobs": map[string]any{job.Body["job_id"].(string): map[string]any{"lease_token": job.Body["lease_token"], "progress": map[string]any{"pct": 50}}}})
	c.do(200, "POST", "/api/v1/ack/"+job.Body["job_id"].(string), key, map[string]any{"worker_id": "w1", "lease_token": job.Body["lease_token"], "result": map[string]any{"ok": true}})
	jobs := c.do(200, "POST", "/api/v1/fetch/batch", key, map[string]any{"queues": []string{"oa"}, "worker_id": "w1", "timeout": 0, "max": 1})
	leased := jobs.Body["jobs"].([]any)[0].(map[string]any)
	c.do(200, "POST", "/api/v1/fail/"+leased["job_id"].(string), key, map[string]any{"worker_id": "w1", "lease_token": leased["lease_token"], "error": "boom", "backtrace": "at x"})
	c.do(200, "POST", "/api/v1/fetch/batch", key, map[string]any{"queues": []string{"oa-none"}, "timeout": 0})
	c.do(204, "POST", "/api/v1/fetch", key, map[string]any{"queues": []string{"oa-none"}, "timeout": 0})
	c.do(200, "GET", "/api/v1/jobs/"+job.Body["job_id"].(string), key, nil)
	c.do(200, "GET", "/api/v1/jobs/"+leased["job_id"].(string), key, nil)
	c.do(200, "GET", "/api/v1/jobs/"+one.Body["job_id"].(string), key, nil)
	c.do(200, "POST", "/api/v1/jobs/search", key, map[string]any{"queue": "oa", "limit": 10})
	c.do(200, "POST", "/api/v1/jobs/bulk", key, map[string]any{"job_ids": []any{one.Body["job_id"]}, "action": "change_priority", "priority": "critical"})
	c.do(200, "GET", "/api/v1/dead", key, nil)
	c.do(200, "GET", "/api/v1/batches", key, nil)
	c.do(200, "GET", "/api/v1/bulk", key, nil)
	c.do(200, "GET", "/api/v1/ai/usage?group_by=queue&step=1h", key, nil)
	c.do(400, "GET", "/api/v1/ai/usage?step=90m", key, nil)

	// Where the gRPC port is: public, no key.
	c.do(200, "GET", "/api/v1/info", "", nil)

	// Queues, schedules, workers, the cluster.
	c.do(200, "GET", "/api/v1/queues", key, nil)
	c.do(200, "GET", "/api/v1/queues/oa", key, nil)
	c.do(200, "POST", "/api/v1/queues/oa/pause", key, nil)
	c.do(200, "POST", "/api/v1/queues/oa/concurrency", key, map[string]any{"max": 5})
	c.do(201, "POST", "/api/v1/schedules", key, map[string]any{"name": "nightly", "queue": "oa", "cron": "0 3 * * *"})
	c.do(200, "GET", "/api/v1/schedules", key, nil)
	c.do(200, "GET", "/api/v1/schedules/nightly", key, nil)
	c.do(200, "POST", "/api/v1/schedules/preview", key, map[string]any{"cron": "0 3 * * *"})
	c.do(200, "GET", "/api/v1/workers", key, nil)
	c.do(200, "GET", "/api/v1/cluster", key, nil)

	// Webhooks: the list, a refused endpoint (no test machine resolves a
	// public host, and none is called from here), the signing keys.
	eventually(t, 30*time.Second, func() bool { // the event log is on once the namespace has a key set
		return call(t, "GET", shared.gateway+"/api/v1/webhooks", key, nil).Status == http.StatusOK
	}, "webhooks are served")
	c.do(200, "GET", "/api/v1/webhooks", key, nil)
	c.do(400, "POST", "/api/v1/webhooks", key, map[string]any{"url": "http://hooks.example.com/jobbie", "events": []string{"job.completed"}})
	c.do(404, "GET", "/api/v1/webhooks/wh_none", key, nil)
	// Alert rules: made, read (listed), replaced, refused, deleted.
	c.do(201, "POST", "/api/v1/alerts", key, map[string]any{"name": "oa-rule", "kind": "failure_rate_above", "queue": "oa", "threshold": 20, "for": "10m"})
	c.do(200, "GET", "/api/v1/alerts", key, nil)
	c.do(200, "GET", "/api/v1/alerts/oa-rule", key, nil)
	c.do(200, "PUT", "/api/v1/alerts/oa-rule", key, map[string]any{"kind": "no_worker", "for": "2m", "enabled": false})
	c.do(400, "POST", "/api/v1/alerts", key, map[string]any{"name": "oa-bad", "kind": "no_worker", "for": "later"})
	c.do(404, "GET", "/api/v1/alerts/oa-none", key, nil)
	c.do(204, "DELETE", "/api/v1/alerts/oa-rule", key, nil)
	c.do(200, "GET", "/api/v1/signing-keys", key, nil)

	// Tenant administration: namespaces, keys, roles, usage.
	c.do(200, "GET", "/api/v1/namespaces", key, nil)
	c.do(201, "POST", "/api/v1/namespaces", key, map[string]any{"name": "oa-second"})
	c.do(200, "GET", "/api/v1/namespaces/oa-second", key, nil)
	c.do(200, "GET", "/api/v1/keys", key, nil)
	worker := c.do(201, "POST", "/api/v1/keys", key, map[string]any{"name": "oa-worker", "role": "worker", "namespaces": []string{"default"}})
	c.do(200, "GET", "/api/v1/roles", key, nil)
	c.do(200, "GET", "/api/v1/usage", key, nil)

	// A repeated Idempotency-Key: the first answer again (200, replayed),
	// another request under it 422; a trace context as headers.
	first := c.do(201, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "oa-idem"}, "Idempotency-Key", "oa-1",
		"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate", "v=1")
	again := c.do(200, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "oa-idem"}, "Idempotency-Key", "oa-1",
		"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate", "v=1")
	require.Equal(t, first.Body["job_id"], again.Body["job_id"])
	require.Equal(t, "true", again.Header.Get("Idempotency-Replayed"))
	c.do(422, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "oa-other"}, "Idempotency-Key", "oa-1")

	// The errors a client meets, each in the error envelope.
	c.do(400, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "oa", "priority": "urgent"})
	c.do(400, "POST", "/api/v1/enqueue", key, `{"queue":`)
	c.do(401, "POST", "/api/v1/enqueue", "", map[string]any{"queue": "oa"})
	c.do(401, "GET", "/api/v1/keys", "not-a-key", nil)
	c.do(403, "GET", "/api/v1/keys", worker.Body["key"].(string), nil)
	c.do(404, "GET", "/api/v1/jobs/job_none", key, nil)
	c.do(404, "GET", "/api/v1/namespaces/oa-none", key, nil)
	c.do(409, "POST", "/api/v1/namespaces", key, map[string]any{"name": "oa-second"})
	c.do(409, "POST", "/api/v1/ack/"+leased["job_id"].(string), key, map[string]any{"worker_id": "w1", "lease_token": leased["lease_token"]})

	// A job's lifecycle events, streamed: the headers of the stream.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := c.request("GET", "/api/v1/events", key, nil)
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	line, err := readLine(res.Body, 10*time.Second)
	require.NoError(t, err)
	cancel()
	res.Body.Close()
	c.check(req, &http.Response{StatusCode: res.StatusCode, Header: res.Header}, []byte(line))
}

// A tenant over its plan's quota gets 429 with Retry-After and the
// RateLimit fields, as the document says.
func TestOpenAPIDescribesQuota429(t *testing.T) {
	t.Parallel()
	c := newConformance(t, shared.gateway)
	_, ct, _ := tenantOnPlan(t, map[string]any{"limits": map[string]any{"max_schedules": 1, "requests_per_second": 10000}})
	c.do(201, "POST", "/api/v1/schedules", ct.OwnerKey, map[string]any{"name": "one", "queue": "q", "cron": "0 3 * * *"})
	r := c.do(429, "POST", "/api/v1/schedules", ct.OwnerKey, map[string]any{"name": "two", "queue": "q", "cron": "0 3 * * *"})
	require.Equal(t, "quota_exceeded", r.code())
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	require.NotEmpty(t, r.Header.Get(wire.RateLimitHeader))
}

// The rest of the families, as a user manages them: a job's retry,
// move, cancel and delete; a chain and a batch; a background bulk and its
// progress stream; a queue declared, throttled, drained, cleared and
// deleted; a schedule's life; keys, roles and namespaces changed;
// backups; plan and invoices. Every answer as the document says.
func TestOpenAPIDescribesManagement(t *testing.T) {
	t.Parallel()
	c := newConformance(t, shared.gateway)
	_, ct := shared.tenant(t)
	key := ct.OwnerKey
	id := func(r reply, field string) string { return r.Body[field].(string) }

	// Jobs, a chain and a batch.
	a := c.do(201, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "om", "scheduled_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	c.do(200, "POST", "/api/v1/jobs/"+id(a, "job_id")+"/move", key, map[string]any{"queue": "om-2"})
	c.do(200, "POST", "/api/v1/jobs/"+id(a, "job_id")+"/cancel", key, nil)
	c.do(200, "POST", "/api/v1/jobs/"+id(a, "job_id")+"/retry", key, nil)
	c.do(204, "DELETE", "/api/v1/jobs/"+id(a, "job_id"), key, nil)
	chain := c.do(201, "POST", "/api/v1/enqueue", key, map[string]any{"queue": "om-c",
		"chain": map[string]any{"steps": []any{map[string]any{"queue": "om-c"}, map[string]any{"queue": "om-c2"}}}})
	c.do(200, "GET", "/api/v1/jobs/"+id(chain, "job_id")+"/chain", key, nil)
	batch := c.do(201, "POST", "/api/v1/enqueue/batch", key, map[string]any{"jobs": []any{map[string]any{"queue": "om-b"}},
		"batch": map[string]any{"callback_queue": "om-cb"}})
	c.do(200, "GET", "/api/v1/batches/"+id(batch, "batch_id"), key, nil)
	w := c.do(200, "POST", "/api/v1/fetch", key, map[string]any{"queues": []string{"om-b"}, "worker_id": "w2", "timeout": 0})
	c.do(200, "POST", "/api/v1/ack/batch", key, map[string]any{"worker_id": "w2",
		"acks": []any{map[string]any{"job_id": w.Body["job_id"], "lease_token": w.Body["lease_token"]}, map[string]any{"job_id": "job_none"}}})

	// A background bulk: a filter that matches more than a request does
	// at once is not needed for its routes; a done one is listed.
	c.do(200, "POST", "/api/v1/jobs/bulk", key, map[string]any{"filter": map[string]any{"queue": "om-none"}, "action": "delete"})
	c.do(404, "GET", "/api/v1/bulk/bulk_none", key, nil)

	// A queue's settings.
	c.do(200, "PUT", "/api/v1/queues/om-q", key, map[string]any{"description": "d", "paused": false, "concurrency": 4,
		"throttle": map[string]any{"rate": 10, "period": "1s"}, "defaults": map[string]any{"max_retries": 5, "retry_backoff": "linear"}})
	c.do(200, "GET", "/api/v1/queues/om-q", key, nil)
	c.do(200, "POST", "/api/v1/queues/om-q/throttle", key, map[string]any{"rate": 5, "period": "1m"})
	c.do(200, "DELETE", "/api/v1/queues/om-q/throttle", key, nil)
	c.do(200, "DELETE", "/api/v1/queues/om-q/concurrency", key, nil)
	c.do(200, "POST", "/api/v1/queues/om-q/defaults", key, map[string]any{"max_retries": 2})
	c.do(200, "POST", "/api/v1/queues/om-q/resume", key, nil)
	c.do(200, "POST", "/api/v1/queues/om-q/drain", key, nil)
	c.do(200, "POST", "/api/v1/queues/om-q/clear", key, nil)
	c.do(400, "DELETE", "/api/v1/queues/om-q", key, nil)
	c.do(200, "DELETE", "/api/v1/queues/om-q?confirm=true", key, nil)

	// A schedule's life.
	s := c.do(201, "POST", "/api/v1/schedules", key, map[string]any{"name": "om-s", "queue": "om", "cron": "*/5 * * * *", "timezone": "Europe/Paris"})
	c.do(200, "PUT", "/api/v1/schedules/"+id(s, "id"), key, map[string]any{"name": "om-s", "queue": "om", "cron": "0 * * * *"})
	c.do(200, "POST", "/api/v1/schedules/"+id(s, "id")+"/disable", key, nil)
	c.do(200, "POST", "/api/v1/schedules/"+id(s, "id")+"/enable", key, nil)
	c.do(201, "POST", "/api/v1/schedules/"+id(s, "id")+"/run", key, nil)
	c.do(204, "DELETE", "/api/v1/schedules/"+id(s, "id"), key, nil)

	// Keys, roles, namespaces.
	k := c.do(201, "POST", "/api/v1/keys", key, map[string]any{"name": "om-k", "role": "developer", "namespaces": []string{"*"}, "description": "d"})
	c.do(200, "GET", "/api/v1/keys/"+id(k, "id"), key, nil)
	c.do(200, "POST", "/api/v1/keys/"+id(k, "id")+"/rotate", key, nil)
	c.do(204, "DELETE", "/api/v1/keys/"+id(k, "id"), key, nil)
	perm := []any{map[string]any{"actions": []string{"job.read"}, "namespaces": []string{"*"}, "queues": []string{"om*"}}}
	c.do(201, "POST", "/api/v1/roles", key, map[string]any{"name": "om-reader", "description": "reads", "permissions": perm})
	c.do(200, "GET", "/api/v1/roles/om-reader", key, nil)
	c.do(200, "GET", "/api/v1/roles/owner", key, nil)
	c.do(200, "PUT", "/api/v1/roles/om-reader", key, map[string]any{"description": "reads more", "permissions": perm})
	c.do(204, "DELETE", "/api/v1/roles/om-reader", key, nil)
	c.do(201, "POST", "/api/v1/namespaces", key, map[string]any{"name": "om-ns", "description": "d", "retention": "24h", "deletion_protection": true})
	c.do(200, "PATCH", "/api/v1/namespaces/om-ns", key, map[string]any{"description": "e"})
	c.do(200, "GET", "/api/v1/namespaces/om-ns/egress", key, nil)
	c.do(200, "PUT", "/api/v1/namespaces/om-ns/egress", key, map[string]any{"egress_allow": []string{"*.example.com"}})
	r := c.do(409, "DELETE", "/api/v1/namespaces/om-ns", key, nil)
	require.Equal(t, "deletion_protected", r.code())
	c.do(200, "PATCH", "/api/v1/namespaces/om-ns", key, map[string]any{"deletion_protection": false})
	c.do(204, "DELETE", "/api/v1/namespaces/om-ns", key, nil)

	// Backups and their policy.
	b := c.do(202, "POST", "/api/v1/backups", key, map[string]any{"namespace": "default"})
	c.do(200, "GET", "/api/v1/backups", key, nil)
	eventually(t, 30*time.Second, func() bool {
		return call(t, "GET", shared.gateway+"/api/v1/backups/"+id(b, "id"), key, nil).Body["state"] != "running"
	}, "the backup finishes")
	c.do(200, "GET", "/api/v1/backups/"+id(b, "id"), key, nil)
	c.do(200, "PUT", "/api/v1/namespaces/default/backup-policy", key, map[string]any{"cron": "0 2 * * *", "retention": 3})
	c.do(200, "GET", "/api/v1/namespaces/default/backup-policy", key, nil)
	c.do(204, "DELETE", "/api/v1/namespaces/default/backup-policy", key, nil)
	c.do(204, "DELETE", "/api/v1/backups/"+id(b, "id"), key, nil)

	// Plan, invoices, shards.
	c.do(200, "GET", "/api/v1/plan", key, nil)
	c.do(200, "GET", "/api/v1/invoices", key, nil)
	c.do(200, "GET", "/api/v1/invoices/upcoming", key, nil)
	c.do(200, "GET", "/api/v1/shards", key, nil)
	c.do(400, "GET", "/api/v1/invoices/nope", key, nil)
}
