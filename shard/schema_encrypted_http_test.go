package shard

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/envelope"
)

// A typed queue in an encrypted namespace checks what the producer wrote,
// never the sealed value the shard stores: a batch's callback payload, a
// schedule's run by hand and its fire all pass a valid payload and refuse
// an invalid one by its pointer.
func TestSchemaChecksPlainPayloadsInAnEncryptedNamespace(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withMasterKey(envelope.NewKey()), withClock(clock))
	r := b.call("PUT", "/api/v1/encryption", map[string]any{"enabled": true})
	require.Equal(t, 200, r.Status, string(r.Raw))
	b.putQueue("payments", map[string]any{"schema": paymentSchema})
	good, bad := map[string]any{"amount": 1}, map[string]any{"amount": -1}

	id := b.enqueue(map[string]any{"queue": "payments", "payload": good})
	require.EqualValues(t, 1, b.job(id)["schema_version"])
	requireRefused(t, b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "payments", "payload": bad}), "payload/amount", "minimum")

	r = b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "other", "payload": "x"}},
		"batch": map[string]any{"callback_queue": "payments", "callback_payload": good}})
	require.Equal(t, 201, r.Status, "a sealed callback payload is checked before it is sealed: %s", r.Raw)
	requireRefused(t, b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "other", "payload": "x"}},
		"batch": map[string]any{"callback_queue": "payments", "callback_payload": bad}}), "batch.callback_payload/amount", "minimum")

	s := b.createSchedule(map[string]any{"name": "tick", "queue": "payments", "cron": "@every 1s", "payload": good})
	sid := s["id"].(string)
	r = b.call("POST", "/api/v1/schedules/"+sid+"/run", nil)
	require.Equal(t, 201, r.Status, "a run by hand checks the schedule's payload opened: %s", r.Raw)
	require.Equal(t, good["amount"], int(b.job(r.Body["job_id"].(string))["payload"].(map[string]any)["amount"].(float64)))
	b.tick(clock, time.Second, sid)
	got := b.call("GET", "/api/v1/schedules/"+sid, nil).Body
	require.Nil(t, got["last_run_refused"], "a fire checks the schedule's payload opened")
	require.NotNil(t, got["last_job_id"])
}
