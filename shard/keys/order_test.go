package keys

// Key order is part of the on-disk format, not only the bytes: fetch takes
// the first key of a queue's pending prefix, sweeps scan a time index up to
// now, the dead list and searches page in creation order. These tests list
// keys in the order each layout promises and check that Pebble's order
// (bytes.Compare) agrees. The golden files pin the bytes; these pin why the
// bytes are laid out that way.

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func requireAscending(t *testing.T, what string, ks ...[]byte) {
	t.Helper()
	for i := 1; i < len(ks); i++ {
		require.Negative(t, bytes.Compare(ks[i-1], ks[i]),
			"%s: key %d [% x] must sort before key %d [% x]", what, i-1, ks[i-1], i, ks[i])
	}
}

// orderedTimes is ascending and crosses every byte boundary of an int64, so
// only a big-endian encoding keeps it ascending.
func orderedTimes() []int64 {
	ts := []int64{0, 1}
	for s := 8; s < 64; s += 8 {
		ts = append(ts, 1<<s-1, 1<<s)
	}
	return append(ts, gCreated, gCreated+1, math.MaxInt64)
}

// byTime builds every key with an 8-byte time followed by a job id.
var byTime = []struct {
	name  string
	build func(at int64, id string) []byte
}{
	{"Pending", func(at int64, id string) []byte { return Pending(gNS, gQueue, 1, at, id) }},
	{"Timed due", func(at int64, id string) []byte { return Timed(gNS, KindDue, at, id) }},
	{"Timed lease", func(at int64, id string) []byte { return Timed(gNS, KindLease, at, id) }},
	{"Timed expire", func(at int64, id string) []byte { return Timed(gNS, KindExpire, at, id) }},
	{"Timed schedule run", func(at int64, id string) []byte { return Timed(gNS, KindScheduleRun, at, id) }},
	{"Timed prune", func(at int64, id string) []byte { return Timed(gNS, KindPrune, at, id) }},
	{"Dead all", func(at int64, id string) []byte { return Dead(gNS, "", at, id) }},
	{"Dead queue", func(at int64, id string) []byte { return Dead(gNS, gQueue, at, id) }},
	{"StateEntry", func(at int64, id string) []byte { return StateEntry(gNS, 4, gQueue, at, id) }},
	{"TagEntry", func(at int64, id string) []byte { return TagEntry(gNS, "customer", "acme", at, id) }},
	{"BatchJob", func(at int64, id string) []byte { return BatchJob(gNS, gBatch, at, id) }},
}

func TestOrderByTimeThenID(t *testing.T) {
	t.Parallel()
	ts := orderedTimes()
	require.True(t, slices.IsSorted(ts))
	for _, k := range byTime {
		var ks [][]byte
		for _, at := range ts {
			ks = append(ks, k.build(at, gJob), k.build(at, gJob2))
		}
		requireAscending(t, k.name, ks...)
		// Sweeps bound a scan with an empty id: [at, ""] starts the keys of
		// time at, and [at+1, ""] ends them.
		requireAscending(t, k.name+" bounds", k.build(gCreated, ""), k.build(gCreated, gJob), k.build(gCreated, gJob2), k.build(gCreated+1, ""))
	}
}

func TestOrderPendingPriorityBeforeTime(t *testing.T) {
	t.Parallel()
	ns, q, end := gNS, gQueue, int64(math.MaxInt64)
	// A critical job is fetched first however new it is; a queue's whole range
	// ends before the next queue's name.
	requireAscending(t, "pending",
		PendingQueue(ns, q),
		Pending(ns, q, 0, 0, gJob),
		Pending(ns, q, 0, end, gJob2),
		Pending(ns, q, 1, 0, gJob),
		Pending(ns, q, 1, end, gJob2),
		Pending(ns, q, 2, 0, gJob),
		Pending(ns, q, 2, end, gJob2),
		PrefixEnd(PendingQueue(ns, q)),
		PendingQueue(ns, q+"2"),
	)
}

// A 00 separator after a variable part makes the whole range of a name sort
// before the range of any longer name it is a prefix of, so scans of one
// queue, tag, batch or scope never run into another's keys.
func TestOrderDelimitedParts(t *testing.T) {
	t.Parallel()
	ns, end := gNS, int64(math.MaxInt64)
	for _, c := range []struct {
		name        string
		last, first []byte // the last key of one range, the first of the next
	}{
		{"Pending queue", Pending(ns, "q", 255, end, gJob2), Pending(ns, "q2", 0, 0, gJob)},
		{"Unique queue", Unique(ns, "q", "\xff"), Unique(ns, "q2", "")},
		{"Dead scope all", Dead(ns, "", end, gJob2), Dead(ns, "a", 0, gJob)},
		{"Dead scope queue", Dead(ns, "q", end, gJob2), Dead(ns, "q2", 0, gJob)},
		{"StateEntry state before queue", StateEntry(ns, 1, "zz", end, gJob2), StateEntry(ns, 2, "a", 0, gJob)},
		{"StateEntry queue", StateEntry(ns, 2, "q", end, gJob2), StateEntry(ns, 2, "q2", 0, gJob)},
		{"TagEntry key", TagEntry(ns, "k", "zz", end, gJob2), TagEntry(ns, "k2", "", 0, gJob)},
		{"TagEntry value", TagEntry(ns, "k", "v", end, gJob2), TagEntry(ns, "k", "v2", 0, gJob)},
		{"BatchJob batch", BatchJob(ns, "batch_1", end, gJob2), BatchJob(ns, "batch_12", 0, gJob)},
		{"BatchMember batch", BatchMember(ns, "batch_1", gJob2), BatchMember(ns, "batch_12", gJob)},
	} {
		requireAscending(t, c.name, c.last, c.first)
	}
}

// Job ids are ULIDs, so id order is creation order.
func TestOrderByJobID(t *testing.T) {
	t.Parallel()
	requireAscending(t, "BatchMember", BatchMembers(gNS, gBatch), BatchMember(gNS, gBatch, gJob), BatchMember(gNS, gBatch, gJob2), PrefixEnd(BatchMembers(gNS, gBatch)))
	requireAscending(t, "Dependent", Dependents(gNS, gJob), Dependent(gNS, gJob, gJob), Dependent(gNS, gJob, gJob2), PrefixEnd(Dependents(gNS, gJob)), Dependent(gNS, gJob2, gJob))
	requireAscending(t, "Job", Job(gNS, gJob), Job(gNS, gJob2))
}

// allKeys builds one key of every kind in namespace ns.
func allKeys(ns string) [][]byte {
	return [][]byte{
		Namespace(ns), Job(ns, gJob), AppendJob(nil, ns, gJob), PendingQueue(ns, gQueue), Pending(ns, gQueue, 0, gCreated, gJob),
		TimeIndex(ns, KindDue), Timed(ns, KindDue, gCreated, gJob), Timed(ns, KindLease, gCreated, gJob),
		Timed(ns, KindExpire, gCreated, gJob), Timed(ns, KindScheduleRun, gCreated, gSched), Timed(ns, KindPrune, gCreated, gJob),
		Unique(ns, gQueue, "u"), Queue(ns, gQueue), QueuePrefix(ns), Schedule(ns, gSched), SchedulePrefix(ns),
		ScheduleName(ns, "n"), ScheduleQueueName(ns, "n", gQueue), ScheduleNamePrefix(ns, "n"), DeadScope(ns, ""), Dead(ns, "", gCreated, gJob), Dead(ns, gQueue, gCreated, gJob),
		Batch(ns, gBatch), BatchMembers(ns, gBatch), BatchMember(ns, gBatch, gJob), Dependents(ns, gJob),
		Dependent(ns, gJob, gJob2), StateQueue(ns, 4, gQueue), StateEntry(ns, 4, gQueue, gCreated, gJob),
		TagPrefix(ns, "k", "v"), TagEntry(ns, "k", "v", gCreated, gJob), BatchJobs(ns, gBatch),
		BatchJob(ns, gBatch, gCreated, gJob), BulkOp(ns, gBulk), BulkOpPrefix(ns),
	}
}

// A namespace is one contiguous range, so it can be scanned, exported or
// deleted by prefix; the registry sorts before every namespace.
func TestOrderNamespaceIsOneRange(t *testing.T) {
	t.Parallel()
	lo, hi := Namespace(gNS), PrefixEnd(Namespace(gNS))
	in := func(k []byte) bool { return bytes.Compare(lo, k) <= 0 && bytes.Compare(k, hi) < 0 }
	for _, k := range allKeys(gNS) {
		require.True(t, in(k), "[% x] is outside its namespace's range", k)
	}
	for _, other := range []string{gNS[:len(gNS)-1], gNS + "2", gNS + "/x"} {
		for _, k := range allKeys(other) {
			require.False(t, in(k), "[% x] of %q is inside %q's range", k, other, gNS)
		}
	}
	requireAscending(t, "registry", RegistryPrefix(), Registry(gNS), PrefixEnd(RegistryPrefix()), lo)
}

// The layout writes an int64 time as its two's-complement bits, so it orders
// only non-negative times: a negative time sorts after every positive one.
// Times are unix nanoseconds and never negative in practice; this pins the
// behaviour so that changing it is a deliberate format change.
func TestOrderNegativeTimesSortLast(t *testing.T) {
	t.Parallel()
	for _, k := range byTime {
		requireAscending(t, k.name, k.build(math.MaxInt64, gJob), k.build(math.MinInt64, gJob), k.build(-1, gJob))
	}
	at, _, err := ParseTimed(gNS, KindDue, Timed(gNS, KindDue, -1, gJob))
	require.NoError(t, err)
	require.Equal(t, int64(-1), at, "negative times still round-trip")
}
