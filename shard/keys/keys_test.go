package keys

import (
	"bytes"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	nsA = "t_01hx0000000000000000000000/default"
	nsB = "t_01hx0000000000000000000000/defaulu"
	id1 = "job_01HX0000000000000000000001"
	id2 = "job_01HX0000000000000000000002"
)

func TestJobIDLen(t *testing.T) {
	t.Parallel()
	require.Len(t, id1, JobIDLen)
}

func TestPendingOrderIsPriorityThenTimeThenID(t *testing.T) {
	t.Parallel()
	ks := [][]byte{
		Pending(nsA, "q", 2, 1, id1),     // normal, oldest
		Pending(nsA, "q", 0, 1<<40, id2), // critical, newest
		Pending(nsA, "q", 1, 5, id1),     // high
		Pending(nsA, "q", 0, 1<<40, id1), // critical, same time, smaller id
		Pending(nsA, "q", 2, 256, id1),   // normal, later (tests byte order past one byte)
	}
	sort.Slice(ks, func(i, j int) bool { return bytes.Compare(ks[i], ks[j]) < 0 })
	want := [][]byte{
		Pending(nsA, "q", 0, 1<<40, id1),
		Pending(nsA, "q", 0, 1<<40, id2),
		Pending(nsA, "q", 1, 5, id1),
		Pending(nsA, "q", 2, 1, id1),
		Pending(nsA, "q", 2, 256, id1),
	}
	require.Equal(t, want, ks)
	p, c, err := PendingOrder(nsA, "q", want[2])
	require.NoError(t, err)
	require.Equal(t, uint8(1), p)
	require.Equal(t, int64(5), c)
	id, err := PendingID(want[1])
	require.NoError(t, err)
	require.Equal(t, id2, id)
}

func TestQueuePrefixesDoNotOverlap(t *testing.T) {
	t.Parallel()
	// "q" must not be a prefix of "q2"'s keys, or fetch from q would see q2's jobs.
	k := Pending(nsA, "q2", 0, 0, id1)
	require.False(t, bytes.HasPrefix(k, PendingQueue(nsA, "q")))
	require.True(t, bytes.HasPrefix(k, PendingQueue(nsA, "q2")))
}

func TestNamespacesAreDisjointRanges(t *testing.T) {
	t.Parallel()
	for _, k := range [][]byte{Job(nsB, id1), Pending(nsB, "q", 0, 0, id1), Timed(nsB, KindDue, 0, id1), Unique(nsB, "q", "u"), Queue(nsB, "q")} {
		require.False(t, bytes.HasPrefix(k, Namespace(nsA)), "%q", k)
		require.True(t, bytes.HasPrefix(k, Namespace(nsB)))
	}
	// A namespace that extends another's name still has its own range.
	require.False(t, bytes.HasPrefix(Job(nsA+"x", id1), Namespace(nsA)))
}

func TestTimedOrderAndParse(t *testing.T) {
	t.Parallel()
	a := Timed(nsA, KindDue, 255, id2)
	b := Timed(nsA, KindDue, 256, id1)
	require.Negative(t, bytes.Compare(a, b))
	at, id, err := ParseTimed(nsA, KindDue, b)
	require.NoError(t, err)
	require.Equal(t, int64(256), at)
	require.Equal(t, id1, id)
	_, _, err = ParseTimed(nsA, KindLease, b)
	require.Error(t, err)
}

func TestRegistrySortsOutsideNamespaces(t *testing.T) {
	t.Parallel()
	r := Registry(nsA)
	require.Equal(t, nsA, RegistryNamespace(r))
	require.Negative(t, bytes.Compare(r, Namespace(nsA)))
	require.True(t, bytes.HasPrefix(r, RegistryPrefix()))
}

// Usage keys lie outside every namespace (a purge keeps them) and apart
// from the registry; buckets sort by hour, then namespace.
func TestUsageKeysOrderAndStayOutsideNamespaces(t *testing.T) {
	t.Parallel()
	const hour = int64(3600e9)
	ks := [][]byte{UsageBucket(2*hour, nsA), UsageBucket(hour, nsB), UsageBucket(hour, nsA), UsageBucket(-hour, nsA)}
	sort.Slice(ks, func(i, j int) bool { return bytes.Compare(ks[i], ks[j]) < 0 })
	require.Equal(t, [][]byte{UsageBucket(hour, nsA), UsageBucket(hour, nsB), UsageBucket(2*hour, nsA), UsageBucket(-hour, nsA)}, ks)
	for _, k := range append(ks, UsageGauge(nsA), UsageClock()) {
		require.False(t, bytes.HasPrefix(k, Namespace(nsA)))
		require.False(t, bytes.HasPrefix(k, RegistryPrefix()))
		require.Negative(t, bytes.Compare(k, Namespace(nsA)))
	}
	require.False(t, bytes.HasPrefix(UsageGauge(nsA), UsageBucketPrefix()))
	require.False(t, bytes.HasPrefix(UsageClock(), UsageGaugePrefix()))
}

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	require.Equal(t, []byte("ab"), PrefixEnd([]byte("aa")))
	require.Equal(t, []byte("b"), PrefixEnd([]byte("a\xff")))
	require.Nil(t, PrefixEnd([]byte("\xff\xff")))
}

func TestScheduleKeys(t *testing.T) {
	t.Parallel()
	const s1, s2 = "sch_01HX0000000000000000000001", "sch_01HX0000000000000000000002"
	require.Len(t, s1, ScheduleIDLen)
	// Records sit under their own prefix, apart from jobs and from other namespaces.
	require.True(t, bytes.HasPrefix(Schedule(nsA, s1), SchedulePrefix(nsA)))
	require.False(t, bytes.HasPrefix(Schedule(nsB, s1), Namespace(nsA)))
	require.False(t, bytes.HasPrefix(Job(nsA, id1), SchedulePrefix(nsA)))
	require.False(t, bytes.HasPrefix(ScheduleName(nsA, "x"), SchedulePrefix(nsA)))
	// A name's prefix holds that name's entries in every queue, and no
	// other name's, even one it starts.
	require.True(t, bytes.HasPrefix(ScheduleQueueName(nsA, "x", "q1"), ScheduleNamePrefix(nsA, "x")))
	require.True(t, bytes.HasPrefix(ScheduleQueueName(nsA, "x", "q2"), ScheduleNamePrefix(nsA, "x")))
	require.False(t, bytes.HasPrefix(ScheduleQueueName(nsA, "xy", "q1"), ScheduleNamePrefix(nsA, "x")))
	require.False(t, bytes.HasPrefix(ScheduleQueueName(nsA, "x", "q1"), ScheduleNamePrefix(nsA, "x\x00q1")))
	// The run index orders by time first, then id, and parses back.
	a := Timed(nsA, KindScheduleRun, 255, s2)
	b := Timed(nsA, KindScheduleRun, 256, s1)
	require.Negative(t, bytes.Compare(a, b))
	at, id, err := ParseTimed(nsA, KindScheduleRun, b)
	require.NoError(t, err)
	require.Equal(t, int64(256), at)
	require.Equal(t, s1, id)
	// Kinds are distinct bytes: no index can read another's keys.
	kinds := []byte{KindJob, KindPending, KindDue, KindLease, KindExpire, KindUnique, KindQueue, KindSchedule, KindScheduleName, KindScheduleQueueName, KindScheduleRun}
	seen := map[byte]bool{}
	for _, k := range kinds {
		require.False(t, seen[k], "kind %c used twice", k)
		seen[k] = true
	}
}

func TestDeadIndexOrderAndScopes(t *testing.T) {
	t.Parallel()
	ks := [][]byte{
		Dead(nsA, "q", 256, id1),
		Dead(nsA, "", 1<<40, id1),
		Dead(nsA, "q", 1, id2),
		Dead(nsA, "", 1, id2),
		Dead(nsA, "q2", 0, id1),
	}
	sort.Slice(ks, func(i, j int) bool { return bytes.Compare(ks[i], ks[j]) < 0 })
	want := [][]byte{
		Dead(nsA, "", 1, id2), Dead(nsA, "", 1<<40, id1),
		Dead(nsA, "q", 1, id2), Dead(nsA, "q", 256, id1),
		Dead(nsA, "q2", 0, id1),
	}
	require.Equal(t, want, ks)
	for _, scope := range []string{"", "q"} {
		p := DeadScope(nsA, scope)
		require.True(t, bytes.HasPrefix(Dead(nsA, scope, 7, id1), p))
	}
	require.False(t, bytes.HasPrefix(Dead(nsA, "q2", 7, id1), DeadScope(nsA, "q")), "a queue's scope excludes longer names")
	at, id, err := ParseDead(nsA, "q", Dead(nsA, "q", 256, id1))
	require.NoError(t, err)
	require.Equal(t, int64(256), at)
	require.Equal(t, id1, id)
	_, _, err = ParseDead(nsA, "", Dead(nsA, "q", 256, id1))
	require.Error(t, err)
	require.NotEqual(t, TimeIndex(nsA, KindPrune), TimeIndex(nsA, KindScheduleRun))
}

func TestBatchAndDependentKeysOrderAndScope(t *testing.T) {
	t.Parallel()
	const batch1, batch2 = "batch_01HX0000000000000000000001", "batch_01HX0000000000000000000002"
	ks := [][]byte{BatchMember(nsA, batch1, id2), BatchMember(nsA, batch2, id1), BatchMember(nsA, batch1, id1)}
	sort.Slice(ks, func(i, j int) bool { return bytes.Compare(ks[i], ks[j]) < 0 })
	require.Equal(t, BatchMember(nsA, batch1, id1), ks[0], "members of a batch sort by job id")
	require.Equal(t, BatchMember(nsA, batch1, id2), ks[1])
	require.Equal(t, id2, MemberID(ks[1]))
	for _, k := range ks[:2] {
		require.True(t, bytes.HasPrefix(k, BatchMembers(nsA, batch1)))
	}
	require.False(t, bytes.HasPrefix(ks[2], BatchMembers(nsA, batch1)))
	require.False(t, bytes.HasPrefix(Batch(nsA, batch1), BatchMembers(nsA, batch1)), "records and members are apart")

	e1, e2 := Dependent(nsA, id1, id2), Dependent(nsA, id2, id1)
	require.True(t, bytes.HasPrefix(e1, Dependents(nsA, id1)))
	require.False(t, bytes.HasPrefix(e2, Dependents(nsA, id1)))
	require.Equal(t, -1, bytes.Compare(Dependent(nsA, id1, id1), e1), "dependents sort by id")
	require.Equal(t, id2, DependentID(e1))
	require.False(t, bytes.HasPrefix(Dependent(nsB, id1, id2), Namespace(nsA)), "namespaced")
}

func TestSearchIndexKeys(t *testing.T) {
	t.Parallel()
	id1, id2 := "job_01HX0000000000000000000001", "job_01HX0000000000000000000002"
	a := StateEntry(nsA, 6, "q", 10, id2)
	b := StateEntry(nsA, 6, "q", 20, id1)
	require.True(t, bytes.HasPrefix(a, StateQueue(nsA, 6, "q")))
	require.False(t, bytes.HasPrefix(a, StateQueue(nsA, 6, "q2")), "queue names are delimited")
	require.False(t, bytes.HasPrefix(a, StateQueue(nsA, 5, "q")))
	require.Equal(t, -1, bytes.Compare(a, b), "creation order before id order")
	created, id, err := CreatedID(b)
	require.NoError(t, err)
	require.Equal(t, int64(20), created)
	require.Equal(t, id1, id)

	ta := TagEntry(nsA, "tenant", "acme", 5, id1)
	require.True(t, bytes.HasPrefix(ta, TagPrefix(nsA, "tenant", "acme")))
	require.False(t, bytes.HasPrefix(ta, TagPrefix(nsA, "tenant", "acm")), "values are delimited")
	created, id, err = CreatedID(ta)
	require.NoError(t, err)
	require.Equal(t, int64(5), created)
	require.Equal(t, id1, id)
	p := Pending(nsA, "q", 1, 7, id2)
	created, id, err = CreatedID(p)
	require.NoError(t, err)
	require.Equal(t, int64(7), created)
	require.Equal(t, id2, id)
	bj := BatchJob(nsA, "batch_1", 9, id2)
	require.True(t, bytes.HasPrefix(bj, BatchJobs(nsA, "batch_1")))
	require.False(t, bytes.HasPrefix(bj, BatchJobs(nsA, "batch_")), "batch ids are delimited")
	created, id, err = CreatedID(bj)
	require.NoError(t, err)
	require.Equal(t, int64(9), created)
	require.Equal(t, id2, id)
	_, _, err = CreatedID([]byte("short"))
	require.Error(t, err)
	require.False(t, bytes.HasPrefix(BulkOp(nsB, "bulk_1"), Namespace(nsA)), "namespaced")
}
