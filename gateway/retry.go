package gateway

import (
	"bytes"
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
)

// During a leader election, or right after a leader moved, a request can
// reach a node that cannot serve it. The gateway then tries again — at the
// leader the node named, or gossip's leader, or the shard's next member —
// for up to LeaderRetryTimeout, so clients see a slower answer rather than
// an error. It only ever repeats a request that was not applied:
//
//   - an answer that says "not the leader" (503 no_leader, or 503/421 with
//     LeaderHeader) is given only for requests the node did not apply;
//   - no answer because the connection could not be made means the request
//     never left;
//   - no answer after the request was sent may mean it was applied, so
//     only reads (GET, HEAD) are repeated then.
//
// When the time is up the client gets 503 with Retry-After.

// Retry pacing: quick first tries (an election on a LAN takes a few
// hundred milliseconds), then no slower than maxRetryBackoff so a new
// leader is found soon after it is elected.
const (
	firstRetryBackoff = 20 * time.Millisecond
	maxRetryBackoff   = 250 * time.Millisecond
	// maxNamedHops is how many times in a row a request follows a named
	// leader without pausing.
	maxNamedHops = 3
)

// notLeader reports a status a node may use to say it is not the one to
// ask. The answer decides (see moved).
func notLeader(status int) bool {
	return status == fasthttp.StatusServiceUnavailable || status == fasthttp.StatusMisdirectedRequest
}

var noLeaderCode = []byte(`"` + string(apierr.NoLeader) + `"`)

// moved reports whether an answer says the request was not applied
// because the node is not the leader, and the leader it names, if any.
func moved(status int, leader, body []byte) (bool, string) {
	if !notLeader(status) {
		return false, ""
	}
	if len(leader) > 0 {
		return true, string(leader)
	}
	return status == fasthttp.StatusServiceUnavailable && bytes.Contains(body, noLeaderCode), ""
}

// leaderRetry is one request's retry budget and pacing.
type leaderRetry struct {
	read    bool
	until   time.Time
	backoff time.Duration
	skips   int // pauses skipped for a named leader
}

func (s *Server) newLeaderRetry(method []byte, deadline time.Time) leaderRetry {
	until := time.Now().Add(s.cfg.LeaderRetryTimeout)
	if deadline.Before(until) {
		until = deadline
	}
	read := string(method) == fasthttp.MethodGet || string(method) == fasthttp.MethodHead
	return leaderRetry{read: read, until: until, backoff: firstRetryBackoff}
}

// mayRepeat reports whether a request that got no answer (err) may be
// sent again: see the top of this file. A full connection pool is
// overload, which retrying would only add to.
func (lr *leaderRetry) mayRepeat(err error) bool {
	if errors.Is(err, fasthttp.ErrNoFreeConns) {
		return false
	}
	return lr.read || notSent(err)
}

// notSent reports an error from before the request was written: the
// connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.Is(err, fasthttp.ErrDialTimeout) || (errors.As(err, &op) && op.Op == "dial")
}

// wait paces the next attempt; now skips the pause (a node named the
// leader). It returns false when the budget is spent or the gateway is
// stopping. A pause ends early when gossip moves a route.
func (s *Server) wait(lr *leaderRetry, now bool) bool {
	left := time.Until(lr.until)
	if left <= 0 {
		return false
	}
	if now && lr.skips < maxNamedHops {
		lr.skips++ // stale nodes naming each other must not spin
		return true
	}
	d := min(lr.backoff, left)
	lr.backoff = min(2*lr.backoff, maxRetryBackoff)
	changed := *s.router.changed.Load()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-s.ctx.Done():
		return false
	}
	return true
}

// retryShard takes over a proxied request whose first attempt, at sc,
// got no answer (err) or a not-the-leader one. It returns nil when resp
// holds the client's answer, or the error to give instead.
func (s *Server) retryShard(r *call, p *placement, sc *shardClient, req *fasthttp.Request, resp *fasthttp.Response, err error, deadline time.Time) error {
	lr := s.newLeaderRetry(req.Header.Method(), deadline)
	first := sc
	for {
		var hint string
		if err == nil {
			var again bool
			again, hint = moved(resp.StatusCode(), resp.Header.Peek(LeaderHeader), resp.Body())
			if !again {
				p.route.served(first, sc)
				return nil // the shard's answer, whatever it is
			}
		} else if !lr.mayRepeat(err) {
			return s.shardFailure(r, p, sc, err)
		}
		next, named := s.router.next(p.route, sc, hint)
		if !s.wait(&lr, named) {
			return s.gaveUp(r, p, sc, resp, err)
		}
		sc = next
		req.Header.SetHost(sc.host)
		resp.Reset()
		err = sc.hc.DoDeadline(req, resp, deadline)
	}
}

// gaveUp is the answer once the retry budget is spent: the shard's own
// 503 (it carries Retry-After), or a 503 of the gateway's.
func (s *Server) gaveUp(r *call, p *placement, sc *shardClient, resp *fasthttp.Response, err error) error {
	if err != nil {
		return s.shardFailure(r, p, sc, err)
	}
	if sc.shouldLog() {
		s.log.Warn("gateway: shard has no leader", "shard", p.route.id, "namespace", p.shardNS, "request_id", r.requestID, "status", resp.StatusCode())
	}
	if resp.StatusCode() != fasthttp.StatusServiceUnavailable {
		return noLeader(r)
	}
	if len(resp.Header.Peek(fasthttp.HeaderRetryAfter)) == 0 {
		resp.Header.Set(fasthttp.HeaderRetryAfter, "1")
	}
	return nil
}

func noLeader(r *call) error {
	return apierr.Retry(apierr.NoLeader, 1, "the shard of namespace %q has no leader right now; retry shortly", r.ns)
}
