package control

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/leader"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// pullSetup is a control node whose only shard, s1, is static at the
// fake shard's address, with tenant acme on it; the puller is run by
// hand, and control's clock stands at 13:00 on the day of hourOf.
func pullSetup(t *testing.T, fs func(*pkitest.CA) *fakeUsageShard, opts ...func(*Config)) (*Server, *fakeUsageShard, string) {
	t.Helper()
	ca := pkitest.New(t)
	shard := fs(ca)
	opts = append([]func(*Config){noPulls, func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: "https://" + shard.addr}}
		c.Clock = clockwork.NewFakeClockAt(hourOf(13))
	}}, opts...)
	srv := startServer(t, testConfig(t, ca, opts...))
	return srv, shard, mustTenant(t, srv, "acme")
}

func s1n1(t *testing.T) func(*pkitest.CA) *fakeUsageShard {
	return func(ca *pkitest.CA) *fakeUsageShard { return newFakeUsageShard(t, ca, pkitest.Shard("s1", "n1")) }
}

// A pull pages through the shard's buckets, stores them, and moves the
// cursor to the oldest hour the shard's applied_at leaves open; the next
// pull reads from there, and reading again counts nothing twice.
func TestPullStoresBucketsAndMovesTheCursor(t *testing.T) {
	t.Parallel()
	srv, shard, tid := pullSetup(t, s1n1(t))
	// applied_at 11:02 is past 10:00 + 1 h + the 1 min margin: hours 9
	// and 10 are closed, 11 is open.
	shard.set(hourOf(11).Add(2*time.Minute),
		bucket(tid, "default", hourOf(9), runs(4)), bucket(tid, "default", hourOf(10), runs(2)),
		bucket(tid, "emails", hourOf(10), runs(1)), bucket(tid, "default", hourOf(11), runs(1)))
	pullOnce(t, srv)
	require.True(t, shard.lastSince(t).Equal(hourOf(13).Add(-leader.PullMaxBack)),
		"a shard never read is read as far back as shards keep hours, less a margin")
	require.Equal(t, 2, shard.requestCount(), "four buckets, two a page")
	require.True(t, cursorOf(t, srv, "s1").Equal(hourOf(11)))
	u := usageOf(t, srv, tid, "")
	require.Equal(t, int64(8), u.Totals.Executions)
	require.False(t, u.Tenant[10].Incomplete)
	require.True(t, u.Tenant[11].Incomplete)

	// The open hour grew; the shard re-reads from the cursor.
	shard.set(hourOf(11).Add(30*time.Minute), bucket(tid, "default", hourOf(9), runs(4)), bucket(tid, "default", hourOf(10), runs(2)),
		bucket(tid, "emails", hourOf(10), runs(1)), bucket(tid, "default", hourOf(11), runs(5)))
	pullOnce(t, srv)
	require.True(t, shard.lastSince(t).Equal(hourOf(11)))
	require.Equal(t, int64(12), usageOf(t, srv, tid, "").Totals.Executions, "11 o'clock's 1 became 5; nothing else counted again")
	pullOnce(t, srv)
	require.Equal(t, int64(12), usageOf(t, srv, tid, "").Totals.Executions)

	// Once applied_at passes 12:01, hour 11 closes.
	shard.set(hourOf(12).Add(90 * time.Second))
	pullOnce(t, srv)
	require.True(t, cursorOf(t, srv, "s1").Equal(hourOf(12)))
	require.False(t, usageOf(t, srv, tid, "").Tenant[11].Incomplete)
}

// A server at a shard's address must prove it is a node of that shard:
// another shard's certificate is refused at the handshake, and an answer
// naming another shard is not stored either.
func TestPullRefusesAnotherShardsIdentity(t *testing.T) {
	t.Parallel()
	srv, impostor, tid := pullSetup(t, func(ca *pkitest.CA) *fakeUsageShard {
		return newFakeUsageShard(t, ca, pkitest.Shard("s2", "n1"))
	})
	impostor.set(hourOf(12), bucket(tid, "default", hourOf(9), runs(4)))
	impostor.mu.Lock()
	impostor.answerAs = "s1" // it would even claim to be s1
	impostor.mu.Unlock()
	err := srv.leader.PullShard(context.Background(), leader.Target{ID: "s1", Addrs: []string{"https://" + impostor.addr}})
	require.ErrorContains(t, err, "is not a member of shard s1")
	require.Zero(t, impostor.requestCount(), "no request reached it")
	require.Zero(t, usageOf(t, srv, tid, "").Totals.Executions)
	require.True(t, cursorOf(t, srv, "s1").IsZero())
}

// A node that answers as another shard than the one its certificate is
// of is not believed.
func TestPullRefusesAnAnswerForAnotherShard(t *testing.T) {
	t.Parallel()
	srv, shard, tid := pullSetup(t, s1n1(t))
	shard.set(hourOf(12), bucket(tid, "default", hourOf(9), runs(4)))
	shard.mu.Lock()
	shard.answerAs = "s2"
	shard.mu.Unlock()
	require.ErrorContains(t, srv.leader.PullShard(context.Background(), leader.Target{ID: "s1", Addrs: []string{"https://" + shard.addr}}),
		`answered for shard "s2"`)
	require.Zero(t, usageOf(t, srv, tid, "").Totals.Executions)
}

// Every member is tried: with the first unreachable, the second serves.
func TestPullTriesEveryMember(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	n2 := newFakeUsageShard(t, ca, pkitest.Shard("s1", "n2"))
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	require.NoError(t, dead.Close())
	srv := startServer(t, testConfig(t, ca, noPulls, func(c *Config) { c.Shards, c.Clock = nil, clockwork.NewFakeClockAt(hourOf(13)) }))
	_, err = srv.RegisterShard(context.Background(), wire.ShardRegistration{ShardID: "s1", Members: []wire.ShardMember{
		{NodeID: "n1", HTTPAddr: deadAddr}, {NodeID: "n2", HTTPAddr: "https://" + n2.addr}}})
	require.NoError(t, err)
	tid := mustTenant(t, srv, "acme")
	n2.set(hourOf(12), bucket(tid, "default", hourOf(9), runs(4)))

	pullOnce(t, srv)
	require.Equal(t, int64(4), usageOf(t, srv, tid, "").Totals.Executions)
	require.True(t, cursorOf(t, srv, "s1").Equal(hourOf(11)))
}

// Control dials only addresses from configuration and registration; a
// Unix socket is the local gateway's, and a configured shard may name
// its nodes' TCP addresses for control.
func TestPullTargets(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls, func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: "unix:/tmp/s1.sock", UsageAddrs: []string{"127.0.0.1:7101", "https://127.0.0.1:7102"}},
			{ID: "s2", Addr: "http://127.0.0.1:7201"}, {ID: "s3", Addr: "https://s3.example"}}
	})
	_, err := b.srv.RegisterShard(context.Background(), wire.ShardRegistration{ShardID: "s2", Members: []wire.ShardMember{
		{NodeID: "n1", HTTPAddr: "127.0.0.1:7201"}, {NodeID: "n2", HTTPAddr: "127.0.0.1:7202"}}})
	require.NoError(t, err)
	got, err := viewValue(b.srv, b.srv.leader.Targets)
	require.NoError(t, err)
	require.Equal(t, []leader.Target{
		{ID: "s1", Addrs: []string{"https://127.0.0.1:7101", "https://127.0.0.1:7102"}},
		{ID: "s2", Addrs: []string{"https://127.0.0.1:7201", "https://127.0.0.1:7202"}},
		{ID: "s3", Addrs: []string{"https://s3.example:443"}},
	}, got)
}

// The loop pulls on its own on the leader, every PullInterval.
func TestPullLoopRunsOnTheLeader(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	shard := newFakeUsageShard(t, ca, pkitest.Shard("s1", "n1"))
	cfg := testConfig(t, ca, func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: shard.addr}}
		c.PullInterval = 10 * time.Millisecond
		c.Clock = clockwork.NewFakeClockAt(hourOf(13))
	})
	srv, err := New(cfg)
	require.NoError(t, err)
	rounds := make(chan struct{}, 1)
	srv.leader.SetOnPull(func() {
		select {
		case rounds <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(func() { require.NoError(t, srv.Stop()) })
	tid := mustTenant(t, srv, "acme")
	shard.set(hourOf(12), bucket(tid, "default", hourOf(9), runs(3)))
	for usageOf(t, srv, tid, "").Totals.Executions != 3 {
		select {
		case <-rounds:
		case <-ctx.Done():
			t.Fatal("the loop never stored the shard's usage")
		}
	}
}
