package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// pushLease leases queue q's next job to the push dispatcher's worker.
func (f *fsmBundle) pushLease(q string) (*job.Job, job.LeaseID) {
	f.t.Helper()
	c := &FetchCmd{NS: testNS, Queues: []string{q}, WorkerID: PushWorker(q), LeaseNs: int64(10 * time.Second), Named: true}
	j := f.apply(FetchNamed.Type, c).(*job.Job)
	return j, job.LeaseOf(j)
}

// A push delivery counts once per attempt the handler's answer settled
// (an ack, a fail); a give-back, a refused settle, and a worker's own
// settle of a pulled job count none.
func TestUsagePushDeliveries(t *testing.T) {
	f := meterFSM(t)
	acked := f.enqueue(&job.Job{Queue: "q"})
	failed := f.enqueue(&job.Job{Queue: "q", MaxRetries: 1})
	back := f.enqueue(&job.Job{Queue: "q"})

	_, l := f.pushLease("q")
	ac := &AckCmd{NS: testNS, ID: acked, WorkerID: PushWorker("q"), Lease: l}
	require.Equal(t, AckPush.Type, AckFor(ac).Type)
	require.Equal(t, job.Completed, f.apply(AckFor(ac).Type, ac))
	require.Error(t, f.apply(AckFor(ac).Type, ac).(error), "settled already")

	_, l = f.pushLease("q")
	fc := &FailCmd{NS: testNS, ID: failed, WorkerID: PushWorker("q"), Error: "500", Lease: l}
	require.Equal(t, FailPush.Type, FailFor(fc).Type)
	require.Equal(t, job.Retrying, f.apply(FailFor(fc).Type, fc).(*FailOutcome).State)

	_, l = f.pushLease("q")
	f.apply(ReleaseLease.Type, &ReleaseCmd{NS: testNS, WorkerID: PushWorker("q"), Jobs: []ReleaseItem{{ID: back, Attempt: 1, Lease: l}}})
	require.EqualValues(t, 2, f.meters(testNS, f.now).PushDeliveries, "an ack and a fail; the give-back spends no attempt")

	pulled := f.fetch("q")
	require.Equal(t, back, pulled.ID)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: back, WorkerID: "w"}))
	m := f.meters(testNS, f.now)
	require.EqualValues(t, 2, m.PushDeliveries, "a pulled job is not a push delivery")
	require.EqualValues(t, 3, m.Executions, "the given-back lease was taken back")
}

// The push numbers meter only the dispatcher's worker of the job's own
// queue: a settle by another name under them counts nothing.
func TestUsagePushDeliveriesOnlyForTheQueuesDispatcher(t *testing.T) {
	f := meterFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	j := f.apply(FetchNamed.Type, &FetchCmd{NS: testNS, Queues: []string{"q"}, WorkerID: PushWorker("other"), LeaseNs: int64(time.Minute), Named: true}).(*job.Job)
	require.Equal(t, job.Completed, f.apply(AckPush.Type, &AckCmd{NS: testNS, ID: id, WorkerID: PushWorker("other"), Lease: job.LeaseOf(j)}))
	require.Zero(t, f.meters(testNS, f.now).PushDeliveries)
}

// Webhook progress meters the attempts it carries, even for an endpoint
// deleted meanwhile; progress under the old number meters nothing.
func TestUsageWebhookDeliveries(t *testing.T) {
	f := meterFSM(t)
	w := f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: WebhookRecord{ID: "wh1", URL: "https://h.example/", Events: []string{"*"}, Enabled: true}}).(*WebhookRecord)
	c := &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: w.Cursor, Attempts: 3}
	require.Equal(t, WebhookProgressMetered.Type, WebhookProgressFor(c).Type)
	require.Equal(t, true, f.apply(WebhookProgressFor(c).Type, c))
	require.Equal(t, true, f.apply(WebhookProgress.Type, &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: w.Cursor, Attempts: 5}))
	require.Equal(t, false, f.apply(WebhookProgressMetered.Type, &WebhookProgressCmd{NS: testNS, ID: "gone", Attempts: 2}))
	require.Equal(t, WebhookProgress.Type, WebhookProgressFor(&WebhookProgressCmd{}).Type)
	require.Equal(t, wire.ShardMeters{WebhookDeliveries: 5}, withoutStorage(f.meters(testNS, f.now)))
}

// A bucket without deliveries has the bytes a node without the delivery
// meters writes (seven varints); one with them reads back whole.
func TestMetersEncodingKeepsOlderBytes(t *testing.T) {
	var m [nMeters]int64
	m[mEnqueued], m[mStorageByteMs] = 3, 7
	b := encodeMeters(nil, &m)
	require.True(t, bytes.Equal([]byte{6, 0, 0, 0, 0, 0, 14}, b), "%x", b)
	require.Equal(t, m, decodeMeters(b))
	m[mWebhookDeliveries] = 2
	b = encodeMeters(nil, &m)
	require.Len(t, b, mWebhookDeliveries+1, "up to the last meter that is not zero")
	require.Equal(t, m, decodeMeters(b))
	m[mAICostNanos] = 1 // the AI meters (aiusage.go) come after the deliveries
	b = encodeMeters(nil, &m)
	require.Len(t, b, nMeters)
	require.Equal(t, m, decodeMeters(b))
}
