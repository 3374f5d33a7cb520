package shard

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// waitThing waits for an accepted event of type typ about subject.
func (r *hookReceiver) waitThing(t *testing.T, typ, subject string) wire.WebhookThingData {
	t.Helper()
	c := r.waitJob(t, typ, subject)
	var d wire.WebhookThingData
	require.NoError(t, json.Unmarshal(c.ev.Data, &d))
	return d
}

// An endpoint subscribes to the events of other things than jobs: a
// paused queue (its queue pattern holds) and a completed batch arrive as
// signed CloudEvents naming them; the event stream carries the batch's
// job events and not these.
func TestWebhookDeliversEventsOfOtherThings(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	b := setup(t, hookConfig(rcv))
	rcv.keys.Store(publicKeys(t, b, testNS))
	n := b.in(testNS)
	n.ok("POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "queues": []string{"mail*"},
		"events": []string{"queue.paused", "batch.completed", "chain.completed", "schedule.fired", "queue.push_disabled", "webhook.disabled"}}, 201)
	s := b.stream()

	n.ok("POST", "/api/v1/queues/reports/pause", nil, 200)
	n.ok("POST", "/api/v1/queues/mail.send/pause", nil, 200)
	require.Equal(t, wire.WebhookThingData{Queue: "mail.send"}, rcv.waitThing(t, "dev.jobbie.queue.paused", "mail.send"))
	n.ok("POST", "/api/v1/queues/mail.send/resume", nil, 200)

	r := n.ok("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []map[string]any{{"queue": "mail.send"}, {"queue": "mail.later"}, {"queue": "mail.later"}},
		"batch": map[string]any{"callback_queue": "mail.done"}}, 201)
	batch, ids := r.Body["batch_id"].(string), r.Body["job_ids"].([]any)
	job := ids[0].(string)
	f := n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"mail.send"}, "worker_id": "w", "timeout": 0}, 200)
	require.Equal(t, job, f.Body["job_id"])
	n.ok("POST", "/api/v1/ack/"+job, map[string]any{}, 200)
	n.ok("POST", "/api/v1/jobs/"+ids[1].(string)+"/cancel", nil, 200)
	require.Equal(t, 204, n.call("DELETE", "/api/v1/jobs/"+ids[2].(string), nil).Status)
	d := rcv.waitThing(t, "dev.jobbie.batch.completed", batch)
	require.Equal(t, batch, d.BatchID)
	require.Equal(t, "mail.done", d.Queue)
	require.Equal(t, "failed", d.Status, "a member did not complete")
	require.Equal(t, &wire.WebhookBatchCounts{Jobs: 3, Succeeded: 1, Failed: 0, Cancelled: 2}, d.Counts,
		"one cancelled, one deleted before it ran")
	require.NotEmpty(t, d.JobID, "the callback job")

	for _, c := range rcv.delivered() {
		require.NotEqual(t, "reports", c.ev.Subject, "the queue pattern holds")
	}
	require.Zero(t, rcv.bad.Load(), "every request verified")

	// The stream: the batch's job events in order (a job deleted has
	// none), then the callback's enqueue; no queue or batch event among
	// them.
	var types []string
	for len(types) < 7 {
		ev := s.nextEvent()
		types = append(types, ev.Event)
		require.NotEmpty(t, ev.Data["job_id"], "a job's event: %v", ev)
	}
	require.Equal(t, []string{"enqueued", "enqueued", "enqueued", "started", "completed", "cancelled", "enqueued"}, types)
}
