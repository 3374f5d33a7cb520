package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

func (f *fsmBundle) setSchema(queue, schema string) {
	f.t.Helper()
	c := &QueueConfigCmd{NS: testNS, Queue: queue, Schema: []byte(schema)}
	require.Equal(f.t, QueueConfigureSchema, QueueConfigureFor(c))
	require.Nil(f.t, f.apply(QueueConfigureSchema.Type, c))
}

// A new schema takes the next version, the same one again none; a
// configuration that keeps it keeps it, one without it removes it, and
// the versions go on counting.
func TestApplyQueueSchemaVersions(t *testing.T) {
	f := setupFSM(t)
	f.setSchema("q", `{"type":"object"}`)
	require.EqualValues(t, 1, f.queue("q").Schema)
	f.setSchema("q", `{"type":"object"}`)
	require.EqualValues(t, 1, f.queue("q").Schema)
	f.setSchema("q", `{"type":"array"}`)
	require.EqualValues(t, 2, f.queue("q").Schema)
	raw, v, err := QueueSchema(f.db, testNS, "q")
	require.NoError(t, err)
	require.Equal(t, `{"type":"array"}`, string(raw))
	require.EqualValues(t, 2, v)

	f.apply(QueueConfigureSchema.Type, &QueueConfigCmd{NS: testNS, Queue: "q", KeepSchema: true, Description: "d"})
	require.EqualValues(t, 2, f.queue("q").Schema)
	f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "q"})
	require.EqualValues(t, 0, f.queue("q").Schema)
	require.False(t, f.has(keys.QueueSchema(testNS, "q")))
	f.setSchema("q", `{"type":"object"}`)
	require.EqualValues(t, 3, f.queue("q").Schema)
}

// An enqueue checked against a version no longer in force (or against no
// schema where there is one now) is refused whole, before it writes: the
// proposer checks again.
func TestApplyEnqueueRefusesAStaleSchemaVersion(t *testing.T) {
	f := setupFSM(t)
	f.setSchema("q", `{"type":"object"}`)
	before := f.dump(testNS)
	for _, checked := range [][]SchemaCheck{
		{{Queue: "q", Version: 0}},
		{{Queue: "other", Version: 0}, {Queue: "q", Version: 2}},
	} {
		j := &job.Job{ID: f.e.newIDForTest(), Queue: "q", Payload: []byte(`{}`), Backoff: job.BackoffNone, Schema: &job.Schema{Version: 1}}
		c := &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}, Checked: checked}
		require.Equal(t, EnqueueSchema, EnqueueFor(c, false))
		err, _ := f.apply(EnqueueSchema.Type, c).(error)
		require.True(t, IsSchemaChanged(err), "%v", err)
		require.Equal(t, before, f.dump(testNS), "a refused enqueue writes nothing")
	}
	j := &job.Job{ID: f.e.newIDForTest(), Queue: "q", Payload: []byte(`{}`), Backoff: job.BackoffNone, Schema: &job.Schema{Version: 1}}
	f.apply(EnqueueSchema.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}, Checked: []SchemaCheck{{Queue: "q", Version: 1}}})
	require.EqualValues(t, 1, f.job(j.ID).SchemaVersion())
	f.setSchema("q", `{"type":"array"}`)
	require.EqualValues(t, 1, f.job(j.ID).SchemaVersion(), "a new schema never rewrites stored jobs")
}

// A chain's later steps and a batch's callback record the versions
// their payloads were checked against when the chain or batch was
// enqueued, whatever is in force when they are created.
func TestApplySpawnedJobsKeepTheirCheckedVersions(t *testing.T) {
	f := setupFSM(t)
	f.setSchema("s2", `{"type":"object"}`)
	f.setSchema("s2", `{"type":"array"}`) // version 2
	raw, err := json.Marshal(wire.ChainSpec{Steps: []wire.StepSpec{{Queue: "s1"}, {Queue: "s2"}, {Queue: "s3"}}})
	require.NoError(t, err)
	j := &job.Job{ID: f.e.newIDForTest(), Queue: "s1", ChainID: "chain_01HX0000000000000000000001", Chain: raw, Backoff: job.BackoffNone,
		Schema: &job.Schema{Steps: []uint32{0, 2, 0, 0, 0}}}
	f.apply(EnqueueSchema.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}, Checked: []SchemaCheck{{"s1", 0}, {"s2", 2}, {"s3", 0}}})
	f.setSchema("s2", `true`) // version 3, after the check
	f.finish("s1", `1`, "")
	s2 := f.pendingIn("s2")[0]
	require.EqualValues(t, 2, s2.SchemaVersion())
	f.finish("s2", `2`, "")
	require.EqualValues(t, 0, f.pendingIn("s3")[0].SchemaVersion())

	f.setSchema("done", `{"type":"object"}`)
	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000009", CallbackQueue: "done", CallbackSchema: 1},
		Checked: []SchemaCheck{{"work", 0}, {"done", 1}}}
	c.Jobs = [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "work", BatchID: c.Batch.ID, Backoff: job.BackoffNone}).Encode()}
	f.apply(EnqueueSchema.Type, c)
	f.finish("work", `1`, "")
	require.EqualValues(t, 1, f.pendingIn("done")[0].SchemaVersion())
}

// A fire checked against a version no longer in force does not fire (the
// next sweep checks again); one refused by the schema uses up its run,
// enqueues nothing and says why.
func TestApplyScheduleFireAgainstTheSchema(t *testing.T) {
	f := setupFSM(t)
	run := f.now.Add(time.Minute)
	f.createSchedule(sch1, "a", run)
	f.setSchema("cron.q", `{"type":"object"}`)
	f.advance(time.Minute)
	fire := func(version uint32, refused string) *FireCmd {
		s, err := ReadSchedule(f.db, testNS, sch1)
		require.NoError(t, err)
		return &FireCmd{NS: testNS, ID: sch1, RunAt: s.NextRun, NextRun: s.NextRun + int64(time.Minute), JobID: f.e.newIDForTest(),
			QueueDefaults: true, Checked: true, Schema: version, Refused: refused}
	}
	c := fire(0, "")
	require.Equal(t, ScheduleFireSchema, ScheduleFireFor(c))
	require.Equal(t, false, f.apply(ScheduleFireSchema.Type, c), "checked against no schema: stale")

	c = fire(1, "payload: got null, want object")
	require.Equal(t, true, f.apply(ScheduleFireSchema.Type, c))
	s, err := ReadSchedule(f.db, testNS, sch1)
	require.NoError(t, err)
	require.Equal(t, "payload: got null, want object", s.Refused)
	require.Empty(t, s.LastJobID)
	require.Equal(t, c.RunAt, s.LastRun)
	require.Equal(t, c.NextRun, s.NextRun)
	require.Empty(t, f.pendingIn("cron.q"))

	f.advance(time.Minute)
	c = fire(1, "")
	require.Equal(t, true, f.apply(ScheduleFireSchema.Type, c))
	s, err = ReadSchedule(f.db, testNS, sch1)
	require.NoError(t, err)
	require.Empty(t, s.Refused)
	require.EqualValues(t, 1, f.job(c.JobID).SchemaVersion())
}
