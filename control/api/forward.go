package api

import (
	"errors"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
)

// Forwarding (the shard's rule, shard/api/forward.go): a follower proxies
// the whole request to the leader, which runs the same handler, so writes
// (and every read whose staleness matters) are answered by the leader.
// A node forwards once: a forwarded request that finds no leader, or
// reaches a node that no longer leads, gets 503 no_leader with
// Retry-After, which means it was not applied and may be sent again.
//
// Served by any node from its own state, where a moment's staleness is
// harmless: the JWKS (a gateway fetches again on an unknown kid), the
// revocation list (polled every second, versioned: a follower's answer
// trails the leader's by the replication delay), health, metrics and the
// node's own status and member list. Everything else is the leader's.
// A follower that knows no leader (cut off from the majority, which may
// be revoking keys) does not serve the revocation list: a gateway must
// see it age and, past its freshness bound, refuse keys.
//
// An internal caller is identified by its certificate; the leader cannot
// see the certificate a follower was reached with, so the follower, once
// it admitted the caller, names it in forwardedPeerHeader, which the
// leader believes only from a control certificate.

const (
	forwardedHeader     = "X-Jobbie-Control-Forwarded" // the forwarding node's id
	forwardedPeerHeader = "X-Jobbie-Control-Peer"      // the identity the follower admitted
	forwardTimeout      = 30 * time.Second
)

// peerLocal holds the caller identity gate admitted.
const peerLocal = "jobbie.control.peer"

// gate admits a caller allowed by allow (nil: anyone; the handler checks
// keys itself) and sends the request to the leader unless this node leads
// or local says any node may answer it.
func (s *Server) gate(allow pki.Policy, local bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var peer pki.Identity
		if allow != nil {
			id, ok := s.callerIdentity(c)
			if !ok {
				return apierr.New(apierr.Unauthenticated, "this endpoint is internal: a client certificate from the deployment's CA is required")
			}
			if err := allow(id); err != nil {
				return apierr.New(apierr.Forbidden, "%s may not call this endpoint", id)
			}
			peer = id
			c.Locals(peerLocal, id)
		}
		node, release, err := s.Acquire()
		if err != nil {
			return err
		}
		leads := node.State() == replica.StateLeader
		following := node.LeaderID() != ""
		addr, known := s.LeaderHTTP(node)
		release()
		switch {
		case leads:
			return c.Next()
		case local && following:
			return c.Next()
		case local, !known, c.Get(forwardedHeader) != "":
			return noLeader()
		}
		if isDownload(&c.Request().Header) {
			return s.proxyStream(c, addr, peer)
		}
		return s.proxy(c, addr, peer)
	}
}

// callerIdentity is the caller's certificate identity, or, for a request
// a control node forwarded, the identity that node admitted.
func (s *Server) callerIdentity(c *fiber.Ctx) (pki.Identity, bool) {
	id, ok := pki.Peer(c, nil)
	if !ok {
		return id, false
	}
	if fwd := c.Get(forwardedPeerHeader); fwd != "" && id.Role == pki.RoleControl {
		fid, err := pki.ParseIdentity(fwd)
		return fid, err == nil
	}
	return id, true
}

// peerOf is the identity gate admitted for c.
func peerOf(c *fiber.Ctx) pki.Identity {
	id, _ := c.Locals(peerLocal).(pki.Identity)
	return id
}

func noLeader() error {
	return apierr.Retry(apierr.NoLeader, 1, "the control plane has no leader this node can reach; retry shortly")
}

// proxy sends the request to the leader at addr and copies its answer.
func (s *Server) proxy(c *fiber.Ctx, addr string, peer pki.Identity) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.Request().Header.CopyTo(&req.Header)
	req.Header.Del(fiber.HeaderConnection)
	req.Header.Del(forwardedPeerHeader)
	req.SetRequestURI("https://" + addr + string(c.Request().URI().RequestURI()))
	req.Header.Set(forwardedHeader, s.cfg.NodeID)
	if peer.Role != "" {
		req.Header.Set(forwardedPeerHeader, peer.String())
	}
	req.SetBodyRaw(c.Body())
	if err := s.fwd.DoTimeout(req, resp, forwardTimeout); err != nil {
		s.log.Warn("control: forward to leader failed", "leader", addr, "path", c.Path(), "err", err)
		if neverSent(err) {
			return noLeader()
		}
		return apierr.Retry(apierr.Unavailable, 1, "the control leader did not answer; the request may have been applied")
	}
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	resp.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case fiber.HeaderContentLength, fiber.HeaderConnection, fiber.HeaderTransferEncoding, fiber.HeaderDate, fiber.HeaderServer:
			return
		}
		out.Header.SetBytesKV(k, v)
	})
	out.SetBody(resp.Body())
	return nil
}

// neverSent reports a forward that failed before the leader could have
// read the request: a refused or timed-out dial, or a failed handshake.
func neverSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var pe *pki.PeerError
	return errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTLSHandshakeTimeout) || errors.As(err, &pe)
}

func newForwarder(tls *pki.Credentials) *fasthttp.Client {
	return &fasthttp.Client{
		TLSConfig:           tls.Client(pki.Roles(pki.RoleControl)),
		MaxConnsPerHost:     64,
		MaxIdleConnDuration: 30 * time.Second,
		ReadTimeout:         forwardTimeout,
		WriteTimeout:        forwardTimeout,
		Dial:                func(a string) (net.Conn, error) { return fasthttp.DialTimeout(a, 2*time.Second) },
	}
}
