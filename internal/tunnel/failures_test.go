package tunnel

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/shardclient"
)

// The agent comes back by itself after the hosted side restarts on the
// same address.
func TestAgentReconnectsAfterHostedRestart(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	gw := ca.Creds(t, pkitest.Gateway)
	h1 := startRegistry(t, gw, "127.0.0.1:0")
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h1.addr, answer("up"))
	waitAgent(t, a, "connected", connected)

	h1.stop()
	down := waitAgent(t, a, "noticed the restart", func(st AgentState) bool { return !st.Connected })
	require.NotEmpty(t, down.LastError)

	h2 := startRegistry(t, gw, h1.addr)
	st := waitAgent(t, a, "reconnected", func(st AgentState) bool { return st.Connected && st.Reconnects == 1 })
	require.Zero(t, st.FailedAttempts)
	waitRegistry(t, h2.Registry, "registered s1/n1 again", func() bool { return h2.Connected("s1", "n1") })
	status, body := get(t, nodeClient(t, h2.Registry, "s1", "n1"), "http://node/")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "up", body)
}

// Only shard nodes of the CA are admitted: a gateway's or an operator's
// certificate, or a shard certificate of another CA, is refused in the
// handshake, and no session is made.
func TestRegistryRefusesOtherRolesAndCAs(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	for name, creds := range map[string]*pki.Credentials{
		"gateway":  ca.Creds(t, pki.Identity{Role: pki.RoleGateway, Node: "g2"}),
		"operator": ca.Creds(t, pkitest.Operator),
		"control":  ca.Creds(t, pkitest.Control),
	} {
		err := refusedByServer(t, h.addr, creds, false)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "bad certificate", name)
	}
	other := pkitest.New(t)
	err := refusedByServer(t, h.addr, other.Creds(t, pkitest.Shard("s1", "n1")), true)
	require.Error(t, err)
	require.Contains(t, err.Error(), "certificate", "another CA's shard certificate is refused")
	require.Empty(t, h.Sessions())

	// An agent is made for a shard certificate only.
	_, err = NewAgent(AgentConfig{Addr: h.addr, TLS: ca.Creds(t, pkitest.Operator)})
	require.ErrorContains(t, err, "not a shard node")
}

// The agent admits only the role it expects at the hosted end.
func TestAgentRefusesUnexpectedEndpoint(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Control), "127.0.0.1:0")
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, answer("x"))
	st := waitAgent(t, a, "failed twice", func(st AgentState) bool { return st.FailedAttempts >= 2 })
	require.False(t, st.Connected)
	require.Contains(t, st.LastError, "may not do this")
	require.Empty(t, h.Sessions())

	// With Expect naming control, the same endpoint is admitted.
	b, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n2")), h.addr, answer("x"),
		func(c *AgentConfig) { c.Expect = pki.Roles(pki.RoleControl) })
	waitAgent(t, b, "connected", connected)
}

// The caller's authorizer is consulted on each accept; a revoked shard is
// disconnected at once, refused when it comes back, and unreachable,
// while other shards go on.
func TestAuthorizeAndRevoke(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	var mu sync.Mutex
	asked := map[string]int{}
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0", func(c *RegistryConfig) {
		c.Authorize = func(id pki.Identity) error {
			mu.Lock()
			defer mu.Unlock()
			asked[id.Shard]++
			if id.Shard == "stranger" {
				return errors.New("not a registered self-hosted shard")
			}
			return nil
		}
	})
	held := make(chan struct{})
	s1, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(held)
		<-r.Context().Done() // a long-poll, ended by the revocation
	}))
	s2, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s2", "n1")), h.addr, answer("s2"))
	stranger, _ := startAgent(t, ca.Creds(t, pkitest.Shard("stranger", "n1")), h.addr, answer("x"))
	waitAgent(t, s1, "connected", connected)
	waitAgent(t, s2, "connected", connected)
	st := waitAgent(t, stranger, "refused twice", func(st AgentState) bool { return st.FailedAttempts >= 2 })
	require.False(t, st.Connected)
	require.Contains(t, st.LastError, "did not admit")
	mu.Lock()
	require.GreaterOrEqual(t, asked["stranger"], 2, "the authorizer is asked on every accept")
	mu.Unlock()
	waitRegistry(t, h.Registry, "registered s1 and s2", func() bool { return len(h.Sessions()) == 2 })
	inflight := make(chan error, 1)
	go func() {
		resp, err := nodeClient(t, h.Registry, "s1", "n1").Get("http://node/fetch")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
		inflight <- err
	}()
	<-held

	h.Revoke("s1")
	require.Error(t, <-inflight, "a request in flight ends with the revoked session")
	require.False(t, h.Connected("s1", "n1"))
	_, err := h.DialContext(context.Background(), "s1", "n1")
	require.ErrorIs(t, err, ErrRevoked)
	waitAgent(t, s1, "disconnected", func(st AgentState) bool { return !st.Connected })
	st = waitAgent(t, s1, "refused after revocation", func(st AgentState) bool { return st.FailedAttempts >= 2 })
	require.Contains(t, st.LastError, "did not admit")
	require.False(t, h.Connected("s1", "n1"))
	// A new node of the revoked shard is refused too.
	other, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n9")), h.addr, answer("x"))
	waitAgent(t, other, "refused", func(st AgentState) bool { return st.FailedAttempts >= 1 })

	status, body := get(t, nodeClient(t, h.Registry, "s2", "n1"), "http://node/")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "s2", body)
	require.Equal(t, []string{"s2"}, shardsOf(h.Sessions()))
}

func shardsOf(ss []SessionInfo) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Node.Shard)
	}
	return out
}

// A dial to a node with no session fails at once with a typed error that
// shardclient counts as not sent (so it may retry even a POST).
func TestDialUnknownNodeFailsFast(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	start := time.Now()
	_, err := h.DialContext(context.Background(), "nowhere", "n1")
	require.ErrorIs(t, err, ErrNotConnected)
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	require.Equal(t, "dial", op.Op)
	require.Equal(t, "tunnel://nowhere/n1", op.Addr.String())
	require.False(t, shardclient.Sent(err))

	_, err = h.Dial("10.0.0.1:80")
	require.ErrorContains(t, err, "not a tunnel://<shard>/<node> address")
	_, err = h.Dial(Addr("nowhere", "n2"))
	require.ErrorIs(t, err, ErrNotConnected)

	// Through an HTTP client too: an error, not a hang.
	_, err = nodeClient(t, h.Registry, "nowhere", "n1").Get("http://node/")
	require.ErrorIs(t, err, ErrNotConnected)
	require.Less(t, time.Since(start), 5*time.Second)

	h.stop()
	_, err = h.DialContext(context.Background(), "nowhere", "n1")
	require.ErrorIs(t, err, ErrClosed)
}

func TestParseAddr(t *testing.T) {
	t.Parallel()
	s, n, ok := ParseAddr(Addr("s-1", "node.2"))
	require.True(t, ok)
	require.Equal(t, []string{"s-1", "node.2"}, []string{s, n})
	for _, bad := range []string{"127.0.0.1:80", "https://s/n", "tunnel://s", "tunnel://s/n/x", "tunnel:///n", "tunnel://s/"} {
		_, _, ok := ParseAddr(bad)
		require.False(t, ok, bad)
	}
}

// The same node connecting again (a restart before its old link was
// found dead) replaces its session: requests reach the new one.
func TestSameNodeReplacesItsSession(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	creds := ca.Creds(t, pkitest.Shard("s1", "n1"))
	// The old agent waits out a long backoff once dropped, so it does
	// not take the node back.
	old, stopOld := startAgent(t, creds, h.addr, answer("old"), func(c *AgentConfig) { c.MinBackoff, c.MaxBackoff = time.Hour, time.Hour })
	waitAgent(t, old, "connected", connected)
	waitRegistry(t, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })
	_, body := get(t, nodeClient(t, h.Registry, "s1", "n1"), "http://node/")
	require.Equal(t, "old", body)

	fresh, _ := startAgent(t, creds, h.addr, answer("new"))
	waitAgent(t, fresh, "connected", connected)
	waitAgent(t, old, "dropped", func(st AgentState) bool { return !st.Connected })
	require.Len(t, h.Sessions(), 1)
	_, body = get(t, nodeClient(t, h.Registry, "s1", "n1"), "http://node/")
	require.Equal(t, "new", body)
	stopOld()
}

// A link that goes silent (packets dropped, no FIN) is found dead by the
// keep-alives on both sides; the agent reconnects.
func TestKeepAliveFindsSilentLink(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	fast := func(c *RegistryConfig) { c.KeepAliveInterval, c.KeepAliveTimeout = 200*time.Millisecond, time.Second }
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0", fast)
	p := startProxy(t, h.addr)
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), p.addr, answer("up"), func(c *AgentConfig) {
		c.KeepAliveInterval, c.KeepAliveTimeout = 200*time.Millisecond, time.Second
	})
	waitAgent(t, a, "connected", connected)
	waitRegistry(t, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })

	p.silence()
	st := waitAgent(t, a, "found the link dead", func(st AgentState) bool { return !st.Connected })
	require.NotEmpty(t, st.LastError)
	waitAgent(t, a, "reconnected", func(st AgentState) bool { return st.Connected && st.Reconnects >= 1 })
	waitRegistry(t, h.Registry, "registered s1/n1 again", func() bool { return h.Connected("s1", "n1") })
	_, body := get(t, nodeClient(t, h.Registry, "s1", "n1"), "http://node/")
	require.Equal(t, "up", body)
}

// proxy forwards TCP to a target; silence turns the links it carries
// into black holes (nothing forwarded, not even a close), as a dead
// network path would.
type proxy struct {
	addr  string
	mu    sync.Mutex
	links []*link
	wg    sync.WaitGroup
}

type link struct {
	a, b    net.Conn
	stalled atomic.Bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{addr: ln.Addr().String()}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			l := &link{a: c, b: up}
			p.mu.Lock()
			p.links = append(p.links, l)
			p.mu.Unlock()
			p.wg.Add(2)
			go p.pipe(l, up, c)
			go p.pipe(l, c, up)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, l := range p.links {
			_ = l.a.Close()
			_ = l.b.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// silence stalls every link open now; new links forward as usual.
func (p *proxy) silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.stalled.Store(true)
	}
}

func (p *proxy) pipe(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if l.stalled.Load() {
			if err != nil {
				return // the close is not passed on either
			}
			continue
		}
		if err != nil {
			_ = dst.Close()
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// An endpoint that accepts TCP and never answers costs the agent one
// DialTimeout per attempt, not a hang.
func TestAgentGivesUpOnSilentEndpoint(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		for _, c := range held {
			_ = c.Close()
		}
		mu.Unlock()
	})
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), ln.Addr().String(), answer("x"),
		func(c *AgentConfig) { c.DialTimeout = 200 * time.Millisecond })
	st := waitAgent(t, a, "gave up twice", func(st AgentState) bool { return st.FailedAttempts >= 2 })
	require.False(t, st.Connected)
	require.Contains(t, st.LastError, "deadline exceeded")
}
