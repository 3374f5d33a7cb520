package gateway

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// shardClient is a keep-alive connection pool to one shard address.
type shardClient struct {
	hc      *fasthttp.HostClient
	host    string
	lastLog atomic.Int64 // unix nanoseconds of the last failure logged
}

// shouldLog rate-limits failure logs to one a second per shard, so an
// outage does not turn every request into a log line.
func (sc *shardClient) shouldLog() bool {
	now := time.Now().UnixNano()
	last := sc.lastLog.Load()
	return now-last > int64(time.Second) && sc.lastLog.CompareAndSwap(last, now)
}

// shardPool holds one shardClient per shard address.
type shardPool struct {
	cfg     Config
	mu      sync.RWMutex
	clients map[string]*shardClient
}

func newShardPool(cfg Config) *shardPool {
	return &shardPool{cfg: cfg, clients: make(map[string]*shardClient)}
}

// get returns the client for addr ("host:port" or an http(s) URL).
func (sp *shardPool) get(addr string) (*shardClient, error) {
	sp.mu.RLock()
	sc, ok := sp.clients[addr]
	sp.mu.RUnlock()
	if ok {
		return sc, nil
	}
	host, tls, unix, err := parseShardAddr(addr)
	if err != nil {
		return nil, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sc, ok := sp.clients[addr]; ok {
		return sc, nil
	}
	sc = &shardClient{host: host, hc: &fasthttp.HostClient{
		Addr:  host,
		IsTLS: tls,
		Name:  "jobbie-gateway",
		// Every waiting long-poll holds a connection, so the pool is large
		// and a request briefly waits for a free one rather than failing.
		MaxConns:            sp.cfg.ShardMaxConns,
		MaxConnWaitTimeout:  time.Second,
		MaxIdleConnDuration: 30 * time.Second,
		// No ReadTimeout: each request carries its own deadline, which for a
		// fetch exceeds its long-poll wait.
		WriteTimeout:           sp.cfg.ShardTimeout,
		MaxResponseBodySize:    sp.cfg.BatchBodyLimit * 4,
		DisablePathNormalizing: true,
	}}
	if unix {
		// A shard on the same host: a Unix socket skips the TCP stack. The
		// socket path is the pool's address, not a Host header.
		sc.host = "localhost"
		sc.hc.Dial = func(path string) (net.Conn, error) { return net.Dial("unix", path) }
	}
	sp.clients[addr] = sc
	return sc, nil
}

// closeIdle closes every idle shard connection.
func (sp *shardPool) closeIdle() {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	for _, sc := range sp.clients {
		sc.hc.CloseIdleConnections()
	}
}

// parseShardAddr accepts host:port, an http(s) URL, or unix:<socket path>.
func parseShardAddr(addr string) (host string, tls, unix bool, err error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return "", false, false, fmt.Errorf("gateway: shard address %q has no socket path", addr)
		}
		return path, false, true, nil
	}
	host = addr
	if strings.Contains(addr, "://") {
		u, perr := url.Parse(addr)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return "", false, false, fmt.Errorf("gateway: shard address %q is not host:port, an http(s) URL or unix:<path>", addr)
		}
		host, tls = u.Host, u.Scheme == "https"
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		return "", false, false, fmt.Errorf("gateway: shard address %q: %w", addr, err)
	}
	return host, tls, false, nil
}
