package shard

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// A fail with non_retryable makes the job dead at once although retries
// remain; its job.dead webhook says why. A fail without it retries.
func TestNonRetryableFailOverHTTP(t *testing.T) {
	t.Parallel()
	hook := newHookReceiver(t, nil)
	b := setup(t, func(c *Config) { c.PushAllowPrivate, c.PushRootCAs = true, hookPool(hook) })
	hook.keys.Store(publicKeys(t, b, testNS))
	b.in(testNS).ok("POST", "/api/v1/webhooks", map[string]any{"url": hook.srv.URL, "events": []string{"job.dead"}}, 201)

	id := b.enqueue(map[string]any{"queue": "cards", "payload": 1, "max_retries": 5})
	f := b.fetch([]string{"cards"}, nil)
	require.Equal(t, 200, f.Status, string(f.Raw))
	r := b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": "card declined", "worker_id": "w1",
		"lease_token": f.Body["lease_token"], "non_retryable": true})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"status": "dead", "attempts_remaining": 0.0, "reason": "non_retryable"}, r.Body)
	j := b.job(id)
	require.Equal(t, "dead", j["state"])
	require.Equal(t, "non_retryable", j["dead_reason"])
	require.EqualValues(t, 1, j["attempt"])
	errs := j["errors"].([]any)
	require.Len(t, errs, 1)
	require.Equal(t, "card declined", errs[0].(map[string]any)["error"])
	tl := j["timeline"].([]any)
	require.Equal(t, map[string]any{"event": "dead", "detail": "non_retryable"}, without(tl[len(tl)-1].(map[string]any), "at"))

	c := hook.waitJob(t, "dev.jobbie.job.dead", id)
	require.Equal(t, "non_retryable", c.data.DeadReason)

	other := b.enqueue(map[string]any{"queue": "cards", "payload": 2, "max_retries": 5})
	require.Equal(t, 200, b.fetch([]string{"cards"}, nil).Status)
	r = b.call("POST", "/api/v1/fail/"+other, map[string]any{"error": "timeout", "worker_id": "w1", "non_retryable": false})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.NotEqual(t, "dead", r.Body["status"])
}

// A push handler's failure answered with "non_retryable": true makes the
// job dead after its one delivery.
func TestPushAnswerNonRetryable(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(422)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": "unknown address", "non_retryable": true})
	})
	b := pushNode(t, rcv)
	b.putQueue("mail", map[string]any{"push": map[string]any{"url": rcv.srv.URL},
		"defaults": map[string]any{"max_retries": 5, "retry_base_delay": 1, "retry_max_delay": 1}})
	id := b.enqueue(map[string]any{"queue": "mail", "payload": 1})
	j := b.waitState(id, "dead")
	require.Equal(t, "non_retryable", j["dead_reason"])
	require.EqualValues(t, 1, j["attempt"])
	require.Equal(t, "unknown address", j["errors"].([]any)[0].(map[string]any)["error"])
	require.EqualValues(t, 1, rcv.calls.Load())
	require.Zero(t, rcv.bad.Load())
}

func without(m map[string]any, k string) map[string]any {
	delete(m, k)
	return m
}
