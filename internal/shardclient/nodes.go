package shardclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
)

// Node is a keep-alive connection pool to one shard node's address, and
// its link (link.go).
type Node struct {
	hc        *fasthttp.HostClient
	maxAnswer int          // Config.MaxResponseBody
	host      string       // the Host header; "localhost" for a Unix socket
	tun       *tunnelDest  // set for a node reached through the tunnel
	lastLog   atomic.Int64 // unix nanoseconds of the last failure logged

	keepOnce sync.Once
	keep     *http.Transport // Send's keep-alive connections (Request.KeepAlive)

	unix     bool   // hc.Addr is a socket path
	linkable bool   // the node may get a link (link.go)
	links    *links // the client's
	link     nodeLink
}

// Host is the node's address, for logs (never for a tenant's error).
func (n *Node) Host() string { return n.hc.Addr }

// shouldLog rate-limits failure logs to one a second per node, so an
// outage does not turn every request into a log line.
func (n *Node) shouldLog() bool {
	now := time.Now().UnixNano()
	last := n.lastLog.Load()
	return now-last > int64(time.Second) && n.lastLog.CompareAndSwap(last, now)
}

// Do sends req to this node once and reads the whole answer into resp
// by deadline, at most Config.MaxResponseBody bytes. A lost connection
// closes the node's idle ones: after a crash or a restart they are all
// dead, and the next request should dial rather than find that out.
func (n *Node) Do(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	return n.DoAnswer(req, resp, deadline, nil)
}

// DoAnswer is Do with the answer bounded and held by a (nil: as Do). An
// answer over its limit is an *AnswerTooLargeError, one its budget
// refused a *BudgetError; either way its connection is closed.
func (n *Node) DoAnswer(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, a *Answer) error {
	if a == nil {
		a = &Answer{}
	}
	a.Release() // an earlier try's
	max := a.Max
	if max <= 0 {
		max = n.maxAnswer
	}
	req.Header.SetHost(n.host)
	if n.hc.IsTLS {
		req.URI().SetScheme("https") // fasthttp refuses a scheme its pool does not speak
	} else {
		req.URI().SetScheme("http")
	}
	if a.Budget == nil && n.linkable {
		if taken, err := n.doLink(req, resp, deadline, max); taken {
			if err != nil && !errors.Is(err, fasthttp.ErrTimeout) && !tooLarge(err) {
				n.hc.CloseIdleConnections() // as below: the node may have gone
			}
			return err
		}
	}
	err := n.hc.DoDeadline(req, resp, deadline)
	if err == nil && n.linkable && !n.link.proven.Load() {
		n.link.proven.Store(true)
		n.linkConn() // dials it
	}
	if err == nil {
		err = readAnswer(resp, a, max)
	} else if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		// Neither a length nor chunks: the pool reads such an answer
		// whole, up to inPlaceAnswer only.
		err = &AnswerTooLargeError{Limit: inPlaceAnswer, Stated: -1}
	}
	if err != nil && !errors.Is(err, fasthttp.ErrNoFreeConns) && !errors.Is(err, fasthttp.ErrTimeout) && !tooLarge(err) && !isBudget(err) {
		n.hc.CloseIdleConnections()
	}
	return err
}

// nodes holds one Node per address and expected peer: with mutual TLS a
// pool only talks to a node whose certificate shows the identity its
// caller expects there (a member of the shard the route is for), so one
// address named for two shards gets two pools, and the wrong one fails.
type nodes struct {
	cfg   Config
	links links
	mu    sync.RWMutex
	byKey map[string]*Node
}

// get returns the pool of addr for shard ("" for Config.NodePolicy).
func (ns *nodes) get(addr, shard string) (*Node, error) {
	key := addr + "\x00" + shard
	ns.mu.RLock()
	n, ok := ns.byKey[key]
	ns.mu.RUnlock()
	if ok {
		return n, nil
	}
	var (
		host       string
		isTLS, unx bool
		tun        *tunnelDest
		err        error
	)
	if strings.HasPrefix(addr, tunnelScheme) {
		// The tunnel is mutual TLS already: the pool speaks plain HTTP
		// over its streams and checks the tunnel's peer on each dial.
		if tun, err = ns.tunnelAddr(addr, shard); err == nil {
			host = tun.node + "." + tun.shard + ".tunnel" // a Host header, never resolved
		}
	} else {
		host, isTLS, unx, err = parseAddr(addr)
	}
	if err != nil {
		return nil, err
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if n, ok := ns.byKey[key]; ok {
		return n, nil
	}
	var tlsConfig *tls.Config
	if ns.cfg.TLS != nil && !unx && tun == nil {
		// Every TCP hop is mutual TLS; a Unix socket is guarded by its
		// file's permissions.
		isTLS, tlsConfig = true, ns.cfg.TLS.Client(ns.expect(shard))
	}
	n = &Node{host: host, maxAnswer: ns.cfg.MaxResponseBody, hc: &fasthttp.HostClient{
		Addr:      host,
		IsTLS:     isTLS,
		TLSConfig: tlsConfig,
		Name:      ns.cfg.Name,
		// Every waiting long-poll holds a connection, so the pool is large
		// and a request briefly waits for a free one rather than failing.
		MaxConns:            ns.cfg.MaxConns,
		MaxConnWaitTimeout:  time.Second,
		MaxIdleConnDuration: 30 * time.Second,
		// No ReadTimeout: each request carries its own deadline, which for a
		// fetch exceeds its long-poll wait.
		WriteTimeout: ns.cfg.WriteTimeout,
		// Answers longer than this, or chunked, come as a stream that
		// DoAnswer reads into a buffer of its own, bounded and charged
		// (answer.go); shorter ones are read in place.
		StreamResponseBody:     true,
		MaxResponseBodySize:    inPlaceAnswer,
		DisablePathNormalizing: true,
		// fasthttp would resend a request, a POST included, whose
		// connection closed before the answer: the shard may have applied
		// it. Whether to send again is Client's decision (see Sent).
		MaxIdemponentCallAttempts: 1,
	}}
	if tun != nil {
		n.tun, n.hc.Addr = tun, addr
		n.hc.Dial = func(string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), tunnelDialTimeout)
			defer cancel()
			return tun.dial(ctx)
		}
	}
	if unx {
		// A node on the same host: a Unix socket skips the TCP stack. The
		// socket path is the pool's address, not a Host header.
		n.host = "localhost"
		n.hc.Dial = func(path string) (net.Conn, error) { return net.Dial("unix", path) }
	}
	n.unix, n.links, n.linkable = unx, &ns.links, tun == nil && !ns.links.off
	if ns.byKey == nil {
		ns.byKey = map[string]*Node{}
	}
	ns.byKey[key] = n
	return n, nil
}

// tunnelScheme starts a tunnel address (tunnel.Addr).
const tunnelScheme = "tunnel://"

// tunnelDialTimeout bounds opening a stream through the tunnel, which
// waits only while the link is too busy to acknowledge new streams.
const tunnelDialTimeout = 10 * time.Second

// expect is the identity a node must show: a member of shard (owned by
// whom Config.ShardOwner says, if set), or what Config.NodePolicy says
// (any shard node by default).
func (ns *nodes) expect(shard string) pki.Policy {
	switch {
	case shard != "" && ns.cfg.ShardOwner != nil:
		owner := ns.cfg.ShardOwner
		return func(id pki.Identity) error { return pki.OwnedShardMember(shard, owner(shard))(id) }
	case shard != "":
		return pki.ShardMember(shard)
	case ns.cfg.NodePolicy != nil:
		return ns.cfg.NodePolicy
	}
	return pki.Roles(pki.RoleShard)
}

// closeIdle closes the nodes' idle connections and their links, and
// waits for the links' dials; the client's context has ended.
func (ns *nodes) closeIdle() {
	ns.mu.RLock()
	for _, n := range ns.byKey {
		n.hc.CloseIdleConnections()
		n.keepOnce.Do(func() {}) // none made after this
		if n.keep != nil {
			n.keep.CloseIdleConnections()
		}
		n.closeLink()
	}
	ns.mu.RUnlock()
	ns.links.wg.Wait()
}

// parseAddr accepts host:port, an http(s) URL, or unix:<socket path>.
func parseAddr(addr string) (host string, tls, unix bool, err error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return "", false, false, fmt.Errorf("shardclient: shard address %q has no socket path", addr)
		}
		return path, false, true, nil
	}
	host = addr
	if strings.Contains(addr, "://") {
		u, perr := url.Parse(addr)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return "", false, false, fmt.Errorf("shardclient: shard address %q is not host:port, an http(s) URL or unix:<path>", addr)
		}
		host, tls = u.Host, u.Scheme == "https"
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		return "", false, false, fmt.Errorf("shardclient: shard address %q: %w", addr, err)
	}
	return host, tls, false, nil
}
