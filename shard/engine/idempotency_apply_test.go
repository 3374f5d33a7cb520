package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// idemEnqueue applies an enqueue of one new job of queue q under key with
// the request hash h, in ns; it returns the outcome or the refusal.
func (f *fsmBundle) idemEnqueue(ns, key, h string, c *EnqueueCmd) any {
	f.t.Helper()
	c.NS = ns
	return f.apply(IdemApply.Type, &IdemCmd{NS: ns, Key: key, Hash: []byte(h), Echo: []byte("echo"), Cmd: Enqueue.Command(c)})
}

func oneJob(f *fsmBundle, q string) *EnqueueCmd {
	j := &job.Job{ID: f.e.newIDForTest(), Queue: q, Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
	return &EnqueueCmd{Jobs: [][]byte{j.Encode()}}
}

func idemResult(t *testing.T, v any) (*IdemOutcome, []EnqueueResult) {
	t.Helper()
	out, ok := v.(*IdemOutcome)
	require.True(t, ok, "got %v", v)
	var res []EnqueueResult
	require.NoError(t, replica.Decode(out.Result, &res))
	return out, res
}

// A repeat of a key with the same request gives back the first result and
// applies nothing; another request under it is refused by name.
func TestApplyIdempotentReplay(t *testing.T) {
	f := setupFSM(t)
	first, res := idemResult(t, f.idemEnqueue(testNS, "k1", "h", oneJob(f, "q")))
	require.False(t, first.Replayed)
	require.Equal(t, []byte("echo"), first.Echo)
	id := res[0].JobID

	// The retry's service made a new job id: it must not be inserted.
	again, res2 := idemResult(t, f.idemEnqueue(testNS, "k1", "h", oneJob(f, "q")))
	require.True(t, again.Replayed)
	require.Equal(t, first.Result, again.Result)
	require.Equal(t, id, res2[0].JobID)
	require.EqualValues(t, 1, f.counts("q")[job.Pending], "one job, not two")

	err, ok := f.idemEnqueue(testNS, "k1", "other body", oneJob(f, "q")).(error)
	require.True(t, ok)
	ae := apierr.From(err)
	require.Equal(t, apierr.IdempotencyKeyReused, ae.Code)
	require.Equal(t, wire.IdempotencyKeyHeader, ae.Field)
	require.EqualValues(t, 1, f.counts("q")[job.Pending])

	// Another namespace's same key is its own.
	other, _ := idemResult(t, f.idemEnqueue(otherNS, "k1", "other body", oneJob(f, "q")))
	require.False(t, other.Replayed)
}

// A key's record lasts its TTL by the entries' clock: after it the key
// applies anew, and the leader's sweep removes due records only.
func TestApplyIdempotentExpiry(t *testing.T) {
	f := setupFSM(t)
	_, res := idemResult(t, f.idemEnqueue(testNS, "k", "h", oneJob(f, "q")))
	expires := f.now.Add(wire.IdempotencyTTL).UnixNano()
	require.True(t, f.has(keys.IdempotencyExpiry(testNS, expires, "k")))

	f.advance(wire.IdempotencyTTL - time.Nanosecond)
	require.Zero(t, f.apply(IdemSweep.Type, &IdemSweepCmd{NS: testNS, Items: []IdemItem{{At: expires, Key: "k"}}}), "not due yet")
	again, _ := idemResult(t, f.idemEnqueue(testNS, "k", "h", oneJob(f, "q")))
	require.True(t, again.Replayed, "still kept a nanosecond before its expiry")

	f.advance(time.Nanosecond)
	fresh, res2 := idemResult(t, f.idemEnqueue(testNS, "k", "another request", oneJob(f, "q")))
	require.False(t, fresh.Replayed, "an expired key is free for any request")
	require.NotEqual(t, res[0].JobID, res2[0].JobID)
	require.EqualValues(t, 2, f.counts("q")[job.Pending])
	require.False(t, f.has(keys.IdempotencyExpiry(testNS, expires, "k")), "the expired record's index entry went with it")
	require.EqualValues(t, 1, idemCount(f.db, testNS))

	later := f.now.Add(wire.IdempotencyTTL).UnixNano()
	f.advance(wire.IdempotencyTTL)
	require.Equal(t, 1, f.apply(IdemSweep.Type, &IdemSweepCmd{NS: testNS, Items: []IdemItem{{At: later, Key: "k"}}}))
	require.False(t, f.has(keys.Idempotency(testNS, "k")))
	require.False(t, f.has(keys.IdempotencyCount(testNS)))
}

// A refused command keeps no record, so the same key may be sent again
// once the cause is gone; a command no key may wrap is refused.
func TestApplyIdempotentRefusalKeepsNothing(t *testing.T) {
	f := setupFSM(t)
	c := oneJob(f, "q")
	c.MaxPending = 1
	f.enqueue(&job.Job{Queue: "q"})
	err, ok := f.idemEnqueue(testNS, "k", "h", c).(error)
	require.True(t, ok)
	require.Equal(t, apierr.QuotaExceeded, apierr.CodeOf(err))
	require.False(t, f.has(keys.Idempotency(testNS, "k")))

	out, _ := idemResult(t, f.idemEnqueue(testNS, "k", "h", oneJob(f, "q")))
	require.False(t, out.Replayed)

	err, ok = f.apply(IdemApply.Type, &IdemCmd{NS: testNS, Key: "k2", Hash: []byte("h"),
		Cmd: Fetch.Command(&FetchCmd{NS: testNS, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(time.Second)})}).(error)
	require.True(t, ok)
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(err))
	require.EqualValues(t, 2, f.counts("q")[job.Pending], "the fetch did not run")
}

// Past its bound a namespace forgets the record that expires first.
func TestApplyIdempotentBound(t *testing.T) {
	f := setupFSM(t)
	f.e.idemMax = 2
	for _, k := range []string{"a", "b", "c"} {
		idemResult(t, f.idemEnqueue(testNS, k, "h", oneJob(f, "q")))
		f.advance(time.Second)
	}
	require.False(t, f.has(keys.Idempotency(testNS, "a")), "the oldest went")
	require.True(t, f.has(keys.Idempotency(testNS, "b")))
	require.True(t, f.has(keys.Idempotency(testNS, "c")))
	require.EqualValues(t, 2, idemCount(f.db, testNS))
	again, _ := idemResult(t, f.idemEnqueue(testNS, "a", "h", oneJob(f, "q")))
	require.False(t, again.Replayed, "a forgotten key applies as new")
}
