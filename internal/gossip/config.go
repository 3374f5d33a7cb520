package gossip

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// DefaultPort is memberlist's customary gossip port, used when BindAddr or
// a join address leaves the port out.
const DefaultPort = 7946

// Config describes one process's membership in the pool.
type Config struct {
	// NodeName must be unique in the pool (memberlist treats two live nodes
	// with one name as a conflict). Required.
	NodeName string
	// BindAddr is the "host:port" to listen on for gossip (UDP and TCP).
	// "" means "0.0.0.0:7946"; port 0 picks a free port (see Pool.Addr).
	// The host must be an IP or resolve to one.
	BindAddr string
	// AdvertiseAddr is the "host" or "host:port" peers should use to reach
	// this node when it differs from BindAddr (NAT, 0.0.0.0 binds). The port
	// defaults to the bound one.
	AdvertiseAddr string
	// Join lists peers ("host:port"; see ResolveJoin for DNS discovery) to
	// contact at start. New fails only if none of them answers.
	Join []string
	// Keys (required) encrypt and authenticate all gossip: each 16, 24 or 32 bytes
	// (AES-128/192/256). The first encrypts; every one is accepted, so a
	// key is rotated by adding the new one second everywhere, then first,
	// then dropping the old (Pool.SetKeys does it live). Nodes that share
	// no key can neither join nor be joined.
	Keys [][]byte
	// Meta is this node's initial metadata; see Pool.UpdateMeta.
	Meta Meta

	// LogOutput receives memberlist's log lines. Nil discards them (or
	// writes to stderr when Debug is set). Its [DEBUG] lines are dropped
	// unless Debug is set.
	LogOutput io.Writer
	Debug     bool

	// Fast selects aggressive timings (failure detected in about a second
	// on loopback) for tests and local clusters. Production leaves it false
	// and gets memberlist.DefaultLANConfig: probe every 1s (500ms timeout),
	// gossip every 200ms, full state sync every 30s, and a failed node
	// declared dead after 4s-24s of suspicion depending on confirmations.
	Fast bool
	// UpdateTimeout bounds how long UpdateMeta waits for its broadcast to
	// go out. Zero means 5s (1s with Fast).
	UpdateTimeout time.Duration
	// Tune, if set, is called on the final memberlist configuration just
	// before the pool is created: an escape hatch for timings and options
	// this package does not expose. Delegates are installed after it runs.
	Tune func(*memberlist.Config)
}

// applyFast sets timings for tests and loopback clusters: a dead node is
// suspected after ~100ms and declared dead within about a second, updates
// spread every 20ms. Too twitchy for real networks.
func applyFast(mc *memberlist.Config) {
	mc.TCPTimeout = time.Second
	mc.IndirectChecks = 1
	mc.RetransmitMult = 2
	mc.SuspicionMult = 2
	mc.SuspicionMaxTimeoutMult = 3
	mc.ProbeInterval = 100 * time.Millisecond
	mc.ProbeTimeout = 80 * time.Millisecond
	mc.GossipInterval = 20 * time.Millisecond
	mc.PushPullInterval = time.Second
	mc.GossipToTheDeadTime = 2 * time.Second
	mc.AwarenessMaxMultiplier = 2
}

func splitBind(s string) (string, int, error) {
	if s == "" {
		return "0.0.0.0", DefaultPort, nil
	}
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("gossip: BindAddr %q: %w", s, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("gossip: BindAddr %q: bad port", s)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if net.ParseIP(host) == nil {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return "", 0, fmt.Errorf("gossip: BindAddr %q: host is not an IP and does not resolve: %v", s, err)
		}
		host = ips[0].String()
	}
	return host, port, nil
}

func splitAdvertise(s string, bindPort int) (string, int, error) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		// Bare host (or bare IPv6 address): keep the bound port.
		return s, bindPort, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("gossip: AdvertiseAddr %q: bad port", s)
	}
	return host, port, nil
}

// newLogger keeps memberlist quiet by default: its debug output is one line
// per probe and join attempt.
func newLogger(out io.Writer, debug bool) *log.Logger {
	switch {
	case out == nil && !debug:
		out = io.Discard
	case out == nil:
		out = os.Stderr
	case !debug:
		out = dropDebug{out}
	}
	return log.New(out, "", log.LstdFlags)
}

// dropDebug filters memberlist's "[DEBUG]" lines; log.Logger writes each
// line with one Write call.
type dropDebug struct{ w io.Writer }

func (d dropDebug) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("[DEBUG]")) {
		return len(b), nil
	}
	return d.w.Write(b)
}
