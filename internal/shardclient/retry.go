package shardclient

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/shardlink"
)

// Retry pacing: quick first tries (an election on a LAN takes a few
// hundred milliseconds), then no slower than maxRetryBackoff so a new
// leader is found soon after it is elected.
const (
	FirstRetryBackoff = 20 * time.Millisecond // the first pause (Config.RetryBackoff); each doubles up to maxRetryBackoff
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

// Sent reports whether a request that got no answer (err) may have
// reached the node: false only when the connection could not be made or
// its TLS handshake failed (either side refused the other's certificate,
// or the node does not speak TLS), so the request certainly was not
// applied and may simply be sent again. A request lost with its link was
// written on a connection open for long: whatever ended the link (a TLS
// alert or a record refused read as a refused handshake would), it was
// sent.
func Sent(err error) bool {
	var op *net.OpError
	var peer *pki.PeerError
	var rec tls.RecordHeaderError
	var lost *shardlink.LostError
	switch {
	case errors.As(err, &lost):
		return true
	case errors.Is(err, fasthttp.ErrDialTimeout), errors.Is(err, fasthttp.ErrNoFreeConns), errors.Is(err, fasthttp.ErrTLSHandshakeTimeout):
		return false
	case errors.As(err, &peer), errors.As(err, &rec):
		return false
	case errors.As(err, &op) && (op.Op == "dial" || op.Op == "remote error"):
		// A TLS 1.3 server refuses a client's certificate with an alert
		// the client reads where it expected the answer.
		return false
	}
	return true
}

// handshakeRefused reports whether err is a TLS handshake either side
// refused: the address does not hold the identity expected of it.
func handshakeRefused(err error) bool {
	var peer *pki.PeerError
	var rec tls.RecordHeaderError
	var op *net.OpError
	var lost *shardlink.LostError
	if errors.As(err, &lost) {
		return false // the link's handshake was done long before
	}
	return errors.As(err, &peer) || errors.As(err, &rec) || (errors.As(err, &op) && op.Op == "remote error")
}

// retry is one request's retry budget and pacing.
type retry struct {
	read    bool
	until   time.Time
	backoff time.Duration
	skips   int // pauses skipped for a named leader
}

func (c *Client) newRetry(method []byte, deadline time.Time) retry {
	until := time.Now().Add(c.cfg.RetryTimeout)
	if deadline.Before(until) {
		until = deadline
	}
	read := string(method) == fasthttp.MethodGet || string(method) == fasthttp.MethodHead
	return retry{read: read, until: until, backoff: c.cfg.RetryBackoff}
}

// mayRepeat reports whether a request that got no answer (err) may be
// sent again (see the package comment). A full connection pool is
// overload, which retrying would only add to; an answer refused for its
// size or by its budget would only be refused again.
func (r *retry) mayRepeat(err error) bool {
	if errors.Is(err, fasthttp.ErrNoFreeConns) || tooLarge(err) || isBudget(err) {
		return false // the same answer again, or the same refusal of it
	}
	return r.read || !Sent(err)
}

// wait paces the next attempt; now skips the pause (a node named the
// leader). It returns false when the budget is spent or the client is
// closing. A pause ends early when gossip moves a route.
func (c *Client) wait(r *retry, now bool) bool {
	left := time.Until(r.until)
	if left <= 0 {
		return false
	}
	if now && r.skips < maxNamedHops {
		r.skips++ // stale nodes naming each other must not spin
		return true
	}
	d := min(r.backoff, left)
	r.backoff = max(min(2*r.backoff, maxRetryBackoff), r.backoff)
	changed := *c.router.changed.Load()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-c.ctx.Done():
		return false
	}
	return true
}
