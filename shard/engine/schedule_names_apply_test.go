package engine

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

const sch3 = "sch_00000000000000000000000003"

// named is the ids of the schedules called name, in queue order.
func (f *fsmBundle) named(name string) []string {
	f.t.Helper()
	list, err := SchedulesNamed(f.db, testNS, name)
	require.NoError(f.t, err)
	ids := []string{}
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// putName applies a create or update of schedule id called name in queue
// under op typ, with the per-queue flag as given.
func (f *fsmBundle) putName(typ replica.CommandType, id, name, queue string, queueNames bool) any {
	f.t.Helper()
	return f.apply(typ, &ScheduleCmd{NS: testNS, QueueNames: queueNames, Sched: Schedule{
		ID: id, Name: name, Queue: queue, Cron: "@every 1m", Timezone: "UTC", Enabled: true, NextRun: f.now.Add(time.Minute).UnixNano(),
	}})
}

func requireNameConflict(t *testing.T, res any) {
	t.Helper()
	err, ok := res.(error)
	require.True(t, ok, "%v", res)
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err))
	var ae *apierr.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "name", ae.Field)
}

// Under the per-queue numbers a name is taken only in its own queue.
func TestApplyScheduleNamesAreUniquePerQueue(t *testing.T) {
	f := setupFSM(t)
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreateQueueNames.Type, sch1, "a", "q2", true))
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreateQueueNames.Type, sch2, "a", "q1", true))
	require.Equal(t, []string{sch2, sch1}, f.named("a"), "in queue order")
	require.True(t, f.has(keys.ScheduleQueueName(testNS, "a", "q1")))
	require.False(t, f.has(keys.ScheduleName(testNS, "a")), "the namespace-wide key is no longer written")

	requireNameConflict(t, f.putName(ScheduleCreateQueueNames.Type, sch3, "a", "q1", true))
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreateQueueNames.Type, sch3, "b", "q1", true))
	// A rename or a move onto a name its queue has is refused; elsewhere it is not.
	requireNameConflict(t, f.putName(ScheduleUpdateQueueNames.Type, sch3, "a", "q1", true))
	requireNameConflict(t, f.putName(ScheduleUpdateQueueNames.Type, sch1, "a", "q1", true))
	require.IsType(t, &Schedule{}, f.putName(ScheduleUpdateQueueNames.Type, sch3, "a", "q3", true))
	require.Equal(t, []string{sch2, sch1, sch3}, f.named("a"))
	require.False(t, f.has(keys.ScheduleQueueName(testNS, "b", "q1")), "the old entry went")
	require.Empty(t, f.named("b"))
	// Deleting one leaves the others.
	require.Nil(t, f.apply(ScheduleDelete.Type, &ScheduleIDCmd{NS: testNS, ID: sch2}))
	require.Equal(t, []string{sch1, sch3}, f.named("a"))
	require.False(t, f.has(keys.ScheduleQueueName(testNS, "a", "q1")))
}

// The numbers from before the per-queue rule replay as they first
// applied: a name any schedule of the namespace holds is taken, even
// when the command carries the flag.
func TestApplyScheduleOldNumbersKeepTheNamespaceRule(t *testing.T) {
	f := setupFSM(t)
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreateQueueNames.Type, sch1, "a", "q1", true))
	for _, typ := range []replica.CommandType{ScheduleCreate.Type, ScheduleCreateDefaults.Type} {
		for _, flag := range []bool{false, true} {
			requireNameConflict(t, f.putName(typ, sch2, "a", "q2", flag))
		}
	}
	_, err := ReadSchedule(f.db, testNS, sch2)
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreate.Type, sch2, "b", "q2", false))
	for _, typ := range []replica.CommandType{ScheduleUpdate.Type, ScheduleUpdateDefaults.Type} {
		for _, flag := range []bool{false, true} {
			requireNameConflict(t, f.putName(typ, sch2, "a", "q2", flag))
		}
	}
	require.Equal(t, "b", f.schedule(sch2).Name, "unchanged")
	require.IsType(t, &Schedule{}, f.putName(ScheduleUpdateQueueNames.Type, sch2, "a", "q2", true))
}

// writeLegacy stores schedule id called name in queue as an earlier
// version did: its record, its run and the namespace-wide name key.
func (f *fsmBundle) writeLegacy(id, name, queue string) *Schedule {
	f.t.Helper()
	s := &Schedule{ID: id, Name: name, Queue: queue, Cron: "@every 1m", Timezone: "UTC", Enabled: true,
		NextRun: f.now.Add(time.Minute).UnixNano(), CreatedAt: f.now.UnixNano(), UpdatedAt: f.now.UnixNano()}
	b := f.db.NewBatch()
	require.NoError(f.t, b.Set(keys.Schedule(testNS, id), replica.Encode(s), nil))
	require.NoError(f.t, b.Set(keys.ScheduleName(testNS, name), []byte(id), nil))
	require.NoError(f.t, b.Set(keys.Timed(testNS, keys.KindScheduleRun, s.NextRun, id), nil, nil))
	require.NoError(f.t, b.Commit(pebble.Sync))
	return s
}

// A store written by an earlier version holds namespace-wide name keys:
// they are found, they count for both rules, and they go when their
// schedule is rewritten or deleted (and only then).
func TestApplyScheduleReadsEarlierNameKeys(t *testing.T) {
	f := setupFSM(t)
	f.writeLegacy(sch1, "a", "q1")
	require.Equal(t, []string{sch1}, f.named("a"))
	requireNameConflict(t, f.putName(ScheduleCreateQueueNames.Type, sch2, "a", "q1", true))
	requireNameConflict(t, f.putName(ScheduleCreate.Type, sch2, "a", "q2", false))

	// Another queue's schedule of the same name is created beside it;
	// deleting that one leaves the earlier key, which is not its own.
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreateQueueNames.Type, sch2, "a", "q2", true))
	require.Equal(t, []string{sch1, sch2}, f.named("a"))
	require.Nil(t, f.apply(ScheduleDelete.Type, &ScheduleIDCmd{NS: testNS, ID: sch2}))
	require.True(t, f.has(keys.ScheduleName(testNS, "a")))
	require.Equal(t, []string{sch1}, f.named("a"))

	// A rewrite (here a disable) moves the name to the per-queue index.
	require.IsType(t, &Schedule{}, f.apply(ScheduleDisable.Type, &ScheduleIDCmd{NS: testNS, ID: sch1}))
	require.False(t, f.has(keys.ScheduleName(testNS, "a")))
	require.True(t, f.has(keys.ScheduleQueueName(testNS, "a", "q1")))
	require.Equal(t, []string{sch1}, f.named("a"))

	// An update, and a delete, remove the earlier key.
	f.writeLegacy(sch3, "c", "q1")
	require.IsType(t, &Schedule{}, f.putName(ScheduleUpdateQueueNames.Type, sch3, "d", "q1", true))
	require.False(t, f.has(keys.ScheduleName(testNS, "c")))
	require.Empty(t, f.named("c"))
	require.Equal(t, []string{sch3}, f.named("d"))
	f.writeLegacy("sch_00000000000000000000000004", "e", "q1")
	require.Nil(t, f.apply(ScheduleDelete.Type, &ScheduleIDCmd{NS: testNS, ID: "sch_00000000000000000000000004"}))
	require.False(t, f.has(keys.ScheduleName(testNS, "e")))
	require.Empty(t, f.named("e"))
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreate.Type, sch2, "e", "q2", false), "the name is free again")
}

// An index entry whose record no longer bears its name (left by a node of
// another version) decides nothing.
func TestApplyScheduleNameEntriesAreCheckedAgainstTheRecord(t *testing.T) {
	f := setupFSM(t)
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreateQueueNames.Type, sch1, "a", "q1", true))
	require.NoError(t, f.db.Set(keys.ScheduleName(testNS, "stale"), []byte(sch1), pebble.Sync))
	require.NoError(t, f.db.Set(keys.ScheduleQueueName(testNS, "stale", "q1"), []byte(sch1), pebble.Sync))
	require.NoError(t, f.db.Set(keys.ScheduleName(testNS, "gone"), []byte(sch3), pebble.Sync))
	require.Empty(t, f.named("stale"))
	require.Empty(t, f.named("gone"))
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreate.Type, sch2, "stale", "q1", false))
	require.IsType(t, &Schedule{}, f.putName(ScheduleCreate.Type, sch3, "gone", "q1", false))
}
