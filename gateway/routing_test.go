package gateway

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Tests of routing to a shard's leader: tenant A's namespace "jobs" is
// placed on shard cluster "c1", whose members are fake shards with c1's
// certificates.

func created(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusCreated, map[string]any{"job_id": "job_1", "status": "pending", "unique_existing": false})
}

// noLeaderAnswer is what a shard node that cannot take a write answers;
// leader, if not empty, names the node that can.
func noLeaderAnswer(leader string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if leader != "" {
			w.Header().Set(wire.LeaderHeader, leader)
		}
		w.Header().Set("Retry-After", "1")
		e := apierr.Retry(apierr.NoLeader, 1, "this node is not the leader")
		e.RequestID = "req_shard"
		writeErr(w, e)
	}
}

// clusterBundle is a gateway with namespace "jobs" on c1 = nodes.
func clusterBundle(t *testing.T, nodes int, opts ...func(*Config)) (*bundle, []*fakeShard) {
	t.Helper()
	b := newBundle(t)
	shards := make([]*fakeShard, nodes)
	addrs := make([]string, nodes)
	for i := range shards {
		shards[i] = newFakeShard(t, b.ca, "c1", fmt.Sprintf("n%d", i))
		addrs[i] = shards[i].addr()
	}
	b.control.Place(tenantA, "jobs", "c1", addrs...)
	b.start(t, opts...)
	b.waitReady(t)
	return b, shards
}

func (b *bundle) enqueue(t *testing.T) reply {
	return b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleProducer, "jobs"), enqueueBody)
}

func TestNoLeaderIsRetriedUntilOneIsElected(t *testing.T) {
	t.Parallel()
	b, nodes := clusterBundle(t, 1)
	var calls atomic.Int64
	nodes[0].setHandler(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 3 { // an election in progress
			noLeaderAnswer("")(w, r)
			return
		}
		created(w, r)
	})
	r := b.enqueue(t)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.EqualValues(t, 4, calls.Load())
	nodes[0].mu.Lock()
	defer nodes[0].mu.Unlock()
	for _, seen := range nodes[0].seen {
		require.JSONEq(t, `{"queue":"emails.send","payload":{"to":"a@example.com"}}`, seen.Body, "each try carries the whole body")
		require.Equal(t, tenancy.ShardNamespace(tenantA, "jobs"), seen.Header.Get(wire.ShardNamespaceHeader))
	}
}

func TestANamedLeaderIsUsedAtOnceAndRemembered(t *testing.T) {
	t.Parallel()
	// A pause between tries long enough that one taken stands out from
	// a loaded machine's delays.
	const pause = 4 * time.Second
	b, nodes := clusterBundle(t, 2, func(c *Config) { c.retryBackoff, c.LeaderRetryTimeout = pause, 3*pause })
	follower, leader := nodes[0], nodes[1]
	follower.setHandler(noLeaderAnswer(leader.addr()))
	leader.setHandler(created)

	require.Equal(t, http.StatusCreated, b.enqueue(t).status)
	require.Equal(t, 1, follower.count())
	require.Equal(t, 1, leader.count())

	require.Equal(t, http.StatusCreated, b.enqueue(t).status)
	require.Equal(t, 1, follower.count(), "the next request goes straight to the leader")
	require.Equal(t, 2, leader.count())

	// The lead moves back: the named node gets the request well within
	// the pause after the refusal: it was not waited for.
	var refused, reached atomic.Int64
	leader.setHandler(func(w http.ResponseWriter, r *http.Request) {
		refused.Store(time.Now().UnixNano())
		noLeaderAnswer(follower.addr())(w, r)
	})
	follower.setHandler(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(time.Now().UnixNano())
		created(w, r)
	})
	require.Equal(t, http.StatusCreated, b.enqueue(t).status)
	require.Less(t, time.Duration(reached.Load()-refused.Load()), pause/2, "a named leader is tried without waiting")
	leader.setHandler(created)
	follower.setHandler(noLeaderAnswer(leader.addr()))
	require.Equal(t, http.StatusCreated, b.enqueue(t).status)

	// A worker's long-poll fetch follows the leader too.
	leader.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(100 * time.Millisecond)
		writeJSON(w, http.StatusOK, map[string]any{"job_id": "job_1"})
	})
	r := b.do(t, http.MethodPost, "/api/v1/fetch", b.key(t, tenancy.RoleWorker, "jobs"), map[string]any{"queues": []string{"q"}, "timeout": 1})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
}

func TestElectionThatOutlastsTheBudgetIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	b, nodes := clusterBundle(t, 2, func(c *Config) { c.LeaderRetryTimeout = 300 * time.Millisecond })
	for _, n := range nodes {
		n.setHandler(noLeaderAnswer(""))
	}
	start := time.Now()
	r := b.enqueue(t)
	took := time.Since(start)
	r.requireError(t, http.StatusServiceUnavailable, apierr.NoLeader)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	require.GreaterOrEqual(t, took, 250*time.Millisecond)
	require.Less(t, took, 2*time.Second, "the budget bounds the wait")
	require.Positive(t, nodes[0].count())
	require.Positive(t, nodes[1].count(), "retries walk the members")

	// A 421 naming no usable leader ends as the gateway's own 503.
	for _, n := range nodes {
		n.setHandler(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set(wire.LeaderHeader, "unix:")
			w.WriteHeader(http.StatusMisdirectedRequest)
		})
	}
	r = b.enqueue(t)
	r.requireError(t, http.StatusServiceUnavailable, apierr.NoLeader)
	require.Equal(t, "1", r.header.Get("Retry-After"))
}

func TestOtherShardErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	b, nodes := clusterBundle(t, 2)
	for _, n := range nodes {
		n.setHandler(func(w http.ResponseWriter, _ *http.Request) {
			writeErr(w, &apierr.Error{Code: apierr.Unavailable, Message: "shutting down", RequestID: "req_shard"})
		})
	}
	r := b.enqueue(t)
	r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Equal(t, 1, nodes[0].count()+nodes[1].count(), "a 503 that is not about the leader is the answer")
}

// dropping is a fake node of c1 that takes the gateway's TLS connection,
// reads each request and closes the connection without answering: the
// request may have been applied.
func dropping(t *testing.T, ca *pkitest.CA) (string, *atomic.Int64) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := tls.NewListener(tcp, ca.Creds(t, pkitest.Shard("c1", "lost")).Server(pki.Roles(pki.RoleGateway)))
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				if k, _ := c.Read(buf); k > 0 {
					n.Add(1)
				}
			}()
		}
	}()
	return ln.Addr().String(), &n
}

func TestOnlyReadsAreRepeatedAfterALostAnswer(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	lost, seen := dropping(t, b.ca)
	other := newFakeShard(t, b.ca, "c1", "other")
	b.control.Place(tenantA, "jobs", "c1", lost, other.addr())
	b.start(t)
	b.waitReady(t)

	b.enqueue(t).requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Zero(t, other.count(), "a write that may have been applied is not sent again")
	require.Positive(t, seen.Load())

	other.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"id": "job_1"})
	})
	r := b.do(t, http.MethodGet, "/api/v1/jobs/job_1", b.key(t, tenancy.RoleViewer, "jobs"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, 1, other.count(), "a read is tried at the next member")
}

func TestWritesMoveOnWhenANodeCannotBeReached(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there: the connection is refused
	up := newFakeShard(t, b.ca, "c1", "up")
	b.control.Place(tenantA, "jobs", "c1", down, up.addr())
	b.start(t)
	b.waitReady(t)

	require.Equal(t, http.StatusCreated, b.enqueue(t).status, "the write never left, so it may go elsewhere")
	require.Equal(t, 1, up.count())
	require.Equal(t, http.StatusCreated, b.enqueue(t).status)
	require.Equal(t, 2, up.count())
}

func TestStreamsOpenAtTheLeader(t *testing.T) {
	t.Parallel()
	b, nodes := clusterBundle(t, 2)
	nodes[0].setHandler(noLeaderAnswer(nodes[1].addr()))
	ended := make(chan struct{})
	nodes[1].setHandler(pinging(20*time.Millisecond, ended))
	resp, rd, cancel := b.openStream(t, b.key(t, tenancy.RoleViewer, "jobs"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": ping 0\n", line)
	cancel()
	<-ended
}

// gossipNode is a fake shard node's presence in the gossip pool.
func gossipNode(t *testing.T, name string, meta gossip.Meta, join ...string) *gossip.Pool {
	t.Helper()
	p, err := gossip.New(gossip.Config{NodeName: name, BindAddr: "127.0.0.1:0", Meta: meta, Fast: true, Join: join,
		Keys: [][]byte{pkitest.GossipKey}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

func shardMeta(node, addr, state string, term uint64, leader, leaderAddr string) gossip.Meta {
	return gossip.Meta{Role: gossip.RoleShard, ShardID: "c1", NodeID: node, HTTPAddr: addr,
		RaftState: state, Term: term, Leader: leader, LeaderHTTP: leaderAddr}
}

// electable answers no_leader until it leads, then takes jobs, counting
// what it took.
type electable struct {
	*fakeShard
	leads atomic.Bool
	took  atomic.Int64
}

func newElectable(t *testing.T, ca *pkitest.CA, node string, leads bool) *electable {
	e := &electable{fakeShard: newFakeShard(t, ca, "c1", node)}
	e.leads.Store(leads)
	e.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if !e.leads.Load() {
			noLeaderAnswer("")(w, r)
			return
		}
		e.took.Add(1)
		created(w, r)
	})
	return e
}

func TestGossipPointsRequestsAtTheLeader(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	a, c := newElectable(t, b.ca, "a", false), newElectable(t, b.ca, "c", true)
	gw := gossipNode(t, "gw", gossip.Meta{Role: gossip.RoleGateway})
	na := gossipNode(t, "a", shardMeta("a", a.addr(), gossip.StateFollower, 1, "c", c.addr()), gw.Addr())
	nc := gossipNode(t, "c", shardMeta("c", c.addr(), gossip.StateLeader, 1, "c", c.addr()), gw.Addr())
	eventually(t, func() bool { m, ok := gw.Leader("c1"); return ok && m.Meta.HTTPAddr == c.addr() }, "the gateway's pool sees c lead")

	b.control.Place(tenantA, "jobs", "c1", a.addr(), c.addr()) // control lists a first
	b.start(t, func(cfg *Config) { cfg.Gossip = gw })
	b.waitReady(t)
	require.Equal(t, http.StatusCreated, b.enqueue(t).status)
	require.Equal(t, 0, a.count(), "gossip's leader wins over control's first member")
	require.EqualValues(t, 1, c.took.Load())

	// c loses leadership: while the election runs both answer no_leader,
	// and the waiting request lands on a once a leads.
	c.leads.Store(false)
	require.NoError(t, nc.UpdateMeta(func(m *gossip.Meta) { *m = shardMeta("c", c.addr(), gossip.StateCandidate, 2, "", "") }))
	done := make(chan reply, 1)
	go func() { done <- b.enqueue(t) }()
	eventually(t, func() bool { return c.count() >= 2 && a.count() >= 1 }, "the request tries both nodes during the election")
	a.leads.Store(true)
	require.NoError(t, na.UpdateMeta(func(m *gossip.Meta) { *m = shardMeta("a", a.addr(), gossip.StateLeader, 2, "a", a.addr()) }))
	select {
	case r := <-done:
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not follow the new leader")
	}
	require.EqualValues(t, 1, a.took.Load())

	// Once gossip says a leads, requests go to a directly.
	eventually(t, func() bool { m, ok := gw.Leader("c1"); return ok && m.Meta.HTTPAddr == a.addr() }, "the gateway's pool sees a lead")
	before := c.count()
	require.Equal(t, http.StatusCreated, b.enqueue(t).status)
	require.Equal(t, before, c.count())
	require.EqualValues(t, 2, a.took.Load())
}

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
