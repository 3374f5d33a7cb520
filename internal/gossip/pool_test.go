package gossip

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/stretchr/testify/require"
)

// newPool starts a pool on a random loopback port with fast timings and
// shuts it down when the test ends.
func newPool(t *testing.T, name string, meta Meta, opts ...func(*Config)) *Pool {
	t.Helper()
	cfg := Config{NodeName: name, BindAddr: "127.0.0.1:0", Meta: meta, Fast: true, Keys: [][]byte{testKey}}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

func joining(addrs ...string) func(*Config) {
	return func(c *Config) { c.Join = addrs }
}

// testKey is the pools' key unless a test says otherwise.
var testKey = bytes.Repeat([]byte{3}, 32)

func withKey(key []byte) func(*Config) {
	return func(c *Config) { c.Keys = [][]byte{key} }
}

// waitFor re-checks cond on every change p reports (and every 50ms, for
// conditions that depend on something else) until it holds or 10s pass.
func waitFor(t *testing.T, p *Pool, what string, cond func() bool) {
	t.Helper()
	ch, cancel := p.Subscribe()
	defer cancel()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; members: %+v", what, p.Members())
		}
	}
}

func names(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func shardMeta(shard, node string) Meta {
	return Meta{Role: RoleShard, ShardID: shard, NodeID: node, RaftState: StateFollower,
		HTTPAddr: node + ".internal:8080", RaftAddr: node + ".internal:7000", Version: "test"}
}

// cluster starts shard nodes a and b of shard s1 and a gateway g, joined
// in a chain, and waits until each sees all three.
func cluster(t *testing.T) (a, b, g *Pool) {
	t.Helper()
	a = newPool(t, "a", shardMeta("s1", "a"))
	b = newPool(t, "b", shardMeta("s1", "b"), joining(a.Addr()))
	g = newPool(t, "g", Meta{Role: RoleGateway, HTTPAddr: "g:443", Version: "test"}, joining(b.Addr()))
	for _, p := range []*Pool{a, b, g} {
		waitFor(t, p, p.Name()+" sees 3 members", func() bool { return len(p.Members()) == 3 })
	}
	return a, b, g
}

func TestThreePoolsSeeEachOther(t *testing.T) {
	a, b, g := cluster(t)
	require.NotContains(t, a.Addr(), ":0")
	require.True(t, strings.HasPrefix(a.Addr(), "127.0.0.1:"))
	for _, p := range []*Pool{a, b, g} {
		ms := p.Members()
		require.Equal(t, []string{"a", "b", "g"}, names(ms))
		require.Equal(t, shardMeta("s1", "a"), ms[0].Meta)
		require.Equal(t, a.Addr(), ms[0].Addr)
		require.Equal(t, shardMeta("s1", "b"), ms[1].Meta)
		require.Equal(t, RoleGateway, ms[2].Meta.Role)
		require.Equal(t, "g:443", ms[2].Meta.HTTPAddr)
		_, ok := p.Leader("s1")
		require.False(t, ok, "nobody claims or reports a leader yet")
	}
	require.Equal(t, Member{Name: "b", Addr: b.Addr(), Meta: shardMeta("s1", "b")}, b.Local())
}

func TestUpdateMetaAndLeader(t *testing.T) {
	a, b, g := cluster(t)
	changed, cancel := g.Subscribe()
	defer cancel()

	becomeLeader := func(term uint64, self Meta) func(*Meta) {
		return func(m *Meta) {
			m.RaftState, m.Term, m.Leader, m.LeaderHTTP = StateLeader, term, self.NodeID, self.HTTPAddr
		}
	}
	require.NoError(t, a.UpdateMeta(becomeLeader(2, a.Meta())))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("gateway got no change notification")
	}
	waitFor(t, g, "a leads s1 at term 2", func() bool {
		l, ok := g.Leader("s1")
		return ok && l.Name == "a" && l.Meta.Term == 2
	})
	l, _ := g.Leader("s1")
	require.Equal(t, "a.internal:8080", l.Meta.HTTPAddr)
	require.False(t, l.Inferred)

	// b wrongly (stale) claims leadership at term 1: a's term 2 still wins,
	// on every node.
	require.NoError(t, b.UpdateMeta(becomeLeader(1, b.Meta())))
	waitFor(t, g, "b's stale claim arrives", func() bool {
		for _, m := range g.Members() {
			if m.Name == "b" {
				return m.Meta.RaftState == StateLeader
			}
		}
		return false
	})
	for _, p := range []*Pool{a, b, g} {
		l, ok := p.Leader("s1")
		require.True(t, ok)
		require.Equal(t, "a", l.Name, "seen from %s", p.Name())
	}

	// b wins an election at term 3; a has not stepped down yet.
	require.NoError(t, b.UpdateMeta(becomeLeader(3, b.Meta())))
	waitFor(t, g, "b leads s1 at term 3", func() bool {
		l, ok := g.Leader("s1")
		return ok && l.Name == "b" && l.Meta.Term == 3
	})
	_, ok := g.Leader("s2")
	require.False(t, ok)

	// Unchanged meta is not re-broadcast and is not an error.
	require.NoError(t, b.UpdateMeta(func(*Meta) {}))
}

func TestShutdownNodeIsDropped(t *testing.T) {
	a, b, g := cluster(t)
	require.NoError(t, g.Shutdown())
	require.NoError(t, g.Shutdown(), "second Shutdown is a no-op")
	waitFor(t, a, "g declared dead", func() bool { return len(a.Members()) == 2 })
	waitFor(t, b, "g declared dead", func() bool { return len(b.Members()) == 2 })
	require.Equal(t, []string{"a", "b"}, names(a.Members()))

	require.ErrorIs(t, g.UpdateMeta(func(m *Meta) { m.Load = 1 }), ErrClosed)
	require.ErrorIs(t, g.Leave(time.Second), ErrClosed)
	_, err := g.Join([]string{a.Addr()})
	require.ErrorIs(t, err, ErrClosed)
}

func TestLeaveIsSeen(t *testing.T) {
	a, b, _ := cluster(t)
	require.NoError(t, b.Leave(5*time.Second))
	require.NoError(t, b.Shutdown())
	waitFor(t, a, "b left", func() bool { return len(a.Members()) == 2 })
	require.Equal(t, []string{"a", "g"}, names(a.Members()))
}

func TestSubscribeClosedOnCancelAndShutdown(t *testing.T) {
	p := newPool(t, "solo", Meta{Role: RoleControl})
	ch1, cancel1 := p.Subscribe()
	ch2, _ := p.Subscribe()
	cancel1()
	cancel1()
	_, open := <-ch1
	require.False(t, open)
	require.NoError(t, p.Shutdown())
	for range ch2 { // drain a pending notification, then see it closed
	}
	ch3, cancel3 := p.Subscribe()
	_, open = <-ch3
	require.False(t, open)
	cancel3()
}

func TestEncryption(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	other := bytes.Repeat([]byte{9}, 16)
	a := newPool(t, "a", Meta{Role: RoleControl}, withKey(key))
	b := newPool(t, "b", Meta{Role: RoleGateway}, withKey(key), joining(a.Addr()))
	waitFor(t, a, "b joins", func() bool { return len(a.Members()) == 2 })
	waitFor(t, b, "a seen", func() bool { return len(b.Members()) == 2 })

	for _, tc := range []struct {
		name string
		key  []byte
		want string
	}{{"wrong key", other, "decrypt"}, {"no key", nil, "Keys are required"}} {
		_, err := New(Config{NodeName: "intruder", BindAddr: "127.0.0.1:0", Meta: Meta{Role: RoleGateway},
			Fast: true, Keys: keysOf(tc.key), Join: []string{a.Addr()}})
		require.ErrorContains(t, err, tc.want, tc.name)
		require.NotContains(t, err.Error(), "\n")
	}
	// A plaintext memberlist node (not one of ours: ours always have a
	// key) can neither join nor be joined.
	mc := memberlist.DefaultLANConfig()
	mc.Name, mc.BindAddr, mc.BindPort = "plain", "127.0.0.1", 0
	mc.LogOutput = io.Discard
	plain, err := memberlist.Create(mc)
	require.NoError(t, err)
	defer func() { _ = plain.Shutdown() }()
	_, err = b.Join([]string{plain.LocalNode().Address()})
	require.ErrorContains(t, err, "not encrypted")
	_, err = plain.Join([]string{a.Addr()})
	require.Error(t, err)

	require.Equal(t, []string{"a", "b"}, names(a.Members()))
	require.Equal(t, 1, plain.NumMembers())

	_, err = New(Config{NodeName: "x", BindAddr: "127.0.0.1:0", Meta: Meta{Role: RoleGateway}, Keys: [][]byte{key, []byte("short")}})
	require.ErrorContains(t, err, "key 2 is 5 bytes")
}

func TestMetaRefused(t *testing.T) {
	big := Meta{Role: RoleGateway, Version: strings.Repeat("v", MaxMetaSize)}
	_, err := New(Config{NodeName: "big", BindAddr: "127.0.0.1:0", Meta: big, Keys: [][]byte{testKey}})
	require.ErrorIs(t, err, ErrMetaTooLarge)
	require.ErrorContains(t, err, "memberlist allows 512")

	_, err = New(Config{NodeName: "bad", BindAddr: "127.0.0.1:0", Meta: Meta{Role: "worker"}, Keys: [][]byte{testKey}})
	require.ErrorContains(t, err, `unknown role "worker"`)
	_, err = New(Config{BindAddr: "127.0.0.1:0", Meta: Meta{Role: RoleGateway}})
	require.ErrorContains(t, err, "NodeName is required")

	p := newPool(t, "p", shardMeta("s1", "p"))
	before := p.Meta()
	err = p.UpdateMeta(func(m *Meta) { m.LeaderHTTP = strings.Repeat("h", 600) })
	require.ErrorIs(t, err, ErrMetaTooLarge)
	err = p.UpdateMeta(func(m *Meta) { m.RaftState = "Leader" })
	require.ErrorContains(t, err, "NormalizeRaftState")
	require.Equal(t, before, p.Meta(), "refused updates change nothing")
	require.Equal(t, before, p.Members()[0].Meta)
}

func TestUndecodableMetaIsSkipped(t *testing.T) {
	p := newPool(t, "p", Meta{Role: RoleControl})
	ev := (*events)(p)
	ev.NotifyJoin(&memberlist.Node{Name: "junk", Meta: []byte("{not json")})
	ev.NotifyJoin(&memberlist.Node{Name: "empty"})
	require.Equal(t, []string{"p"}, names(p.Members()))
	require.Equal(t, 3, p.NumMembers())
	ev.NotifyUpdate(&memberlist.Node{Name: "junk", Meta: []byte(`{"r":"shard","s":"s9","rs":"leader","zz":1}`)})
	require.Equal(t, []string{"junk", "p"}, names(p.Members()))
	l, ok := p.Leader("s9")
	require.True(t, ok)
	require.Equal(t, "junk", l.Name)
	ev.NotifyLeave(&memberlist.Node{Name: "junk"})
	require.Equal(t, []string{"p"}, names(p.Members()))
}

func TestJoinFailsWhenNoneAnswers(t *testing.T) {
	dead := newPool(t, "dead", Meta{Role: RoleControl})
	addr := dead.Addr()
	require.NoError(t, dead.Shutdown())
	_, err := New(Config{NodeName: "lonely", BindAddr: "127.0.0.1:0", Meta: Meta{Role: RoleGateway},
		Fast: true, Join: []string{addr}, Keys: [][]byte{testKey}})
	require.ErrorContains(t, err, "gossip: join")

	// One answering address is enough.
	live := newPool(t, "live", Meta{Role: RoleControl})
	p := newPool(t, "p", Meta{Role: RoleGateway}, joining(addr, live.Addr()))
	waitFor(t, p, "live seen", func() bool { return len(p.Members()) == 2 })
}

func TestJoinThroughDNS(t *testing.T) {
	a := newPool(t, "a", Meta{Role: RoleControl})
	port := a.Addr()[strings.LastIndexByte(a.Addr(), ':')+1:]
	addrs, err := ResolveJoin("dns:localhost:" + port)
	require.NoError(t, err)
	require.Contains(t, addrs, "127.0.0.1:"+port)
	b := newPool(t, "b", Meta{Role: RoleGateway}, joining(addrs...))
	waitFor(t, b, "a seen", func() bool { return len(b.Members()) == 2 })
}

func TestConcurrentUse(t *testing.T) {
	a := newPool(t, "a", shardMeta("s1", "a"))
	b := newPool(t, "b", shardMeta("s1", "b"), joining(a.Addr()))
	waitFor(t, b, "a seen", func() bool { return len(b.Members()) == 2 })

	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	stop := make(chan struct{})
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				errs <- a.UpdateMeta(func(m *Meta) {
					m.Load++
					m.RaftState, m.Term = StateLeader, uint64(m.Load)
				})
			}
		}()
	}
	var readers sync.WaitGroup
	for _, p := range []*Pool{a, b} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			ch, cancel := p.Subscribe()
			defer cancel()
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-ch:
				case <-tick.C:
				}
				_ = p.Members()
				_, _ = p.Leader("s1")
				_ = p.Local()
				_ = p.NumMembers()
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	const want = writers * rounds
	require.EqualValues(t, want, a.Meta().Load)
	waitFor(t, b, fmt.Sprintf("a's load %d arrives", want), func() bool {
		l, ok := b.Leader("s1")
		return ok && l.Name == "a" && l.Meta.Load == want && l.Meta.Term == want
	})
}

func TestLogFilter(t *testing.T) {
	var buf bytes.Buffer
	l := newLogger(&buf, false)
	l.Printf("[DEBUG] memberlist: chatter")
	l.Printf("[WARN] memberlist: something")
	require.NotContains(t, buf.String(), "chatter")
	require.Contains(t, buf.String(), "something")
	buf.Reset()
	newLogger(&buf, true).Printf("[DEBUG] memberlist: chatter")
	require.Contains(t, buf.String(), "chatter")
}

func TestBindAndAdvertiseParsing(t *testing.T) {
	h, p, err := splitBind("")
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0", h)
	require.Equal(t, DefaultPort, p)
	h, p, err = splitBind("localhost:0")
	require.NoError(t, err)
	require.NotEmpty(t, h)
	require.Equal(t, 0, p)
	_, _, err = splitBind("127.0.0.1")
	require.Error(t, err)
	_, _, err = splitBind("127.0.0.1:99999")
	require.Error(t, err)

	h, p, err = splitAdvertise("10.0.0.5", 1234)
	require.NoError(t, err)
	require.Equal(t, "10.0.0.5", h)
	require.Equal(t, 1234, p)
	h, p, err = splitAdvertise("10.0.0.5:99", 1234)
	require.NoError(t, err)
	require.Equal(t, 99, p)
	require.Equal(t, "10.0.0.5", h)
	_, _, err = splitAdvertise("10.0.0.5:x", 1)
	require.Error(t, err)
}

func keysOf(k []byte) [][]byte {
	if k == nil {
		return nil
	}
	return [][]byte{k}
}

// A key is rotated live: the new key added beside the old everywhere,
// then made primary, then the old one dropped; the pool stays whole and
// a node holding only the old key is shut out at the end.
func TestKeyRotation(t *testing.T) {
	old := bytes.Repeat([]byte{1}, 32)
	next := bytes.Repeat([]byte{2}, 32)
	a := newPool(t, "a", Meta{Role: RoleControl}, withKey(old))
	b := newPool(t, "b", Meta{Role: RoleGateway}, withKey(old), joining(a.Addr()))
	waitFor(t, a, "b joins", func() bool { return len(a.Members()) == 2 })

	for _, p := range []*Pool{a, b} {
		require.NoError(t, p.SetKeys([][]byte{old, next}))
	}
	for _, p := range []*Pool{a, b} {
		require.NoError(t, p.SetKeys([][]byte{next, old}))
	}
	// A newcomer with only the new key joins.
	c := newPool(t, "c", Meta{Role: RoleGateway}, withKey(next), joining(a.Addr()))
	waitFor(t, c, "c sees all", func() bool { return len(c.Members()) == 3 })
	for _, p := range []*Pool{a, b, c} {
		require.NoError(t, p.SetKeys([][]byte{next}))
	}
	_, err := New(Config{NodeName: "stale", BindAddr: "127.0.0.1:0", Meta: Meta{Role: RoleGateway},
		Fast: true, Keys: [][]byte{old}, Join: []string{a.Addr()}})
	require.ErrorContains(t, err, "decrypt", "the old key no longer opens the pool")

	require.ErrorContains(t, a.SetKeys(nil), "at least one key")
	require.ErrorContains(t, a.SetKeys([][]byte{[]byte("short")}), "key 1 is 5 bytes")
}
