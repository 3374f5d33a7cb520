package api

import (
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
)

// A backup download reached at a follower is forwarded like any request
// (forward.go), but its answer is streamed as it arrives rather than read
// whole: a backup may be larger than memory and take longer than the
// forward timeout to send.

// streamForwardHeaders are the leader's answer headers a streamed forward
// passes on.
var streamForwardHeaders = []string{fiber.HeaderContentType, fiber.HeaderContentDisposition, fiber.HeaderRetryAfter,
	"X-Jobbie-Backup-Size", apierr.RequestIDHeader}

// newStreamForwarder is the HTTP client for streamed forwards: control's
// certificate, only control nodes admitted, no overall timeout (the
// leader must start answering within forwardTimeout).
func newStreamForwarder(tls *pki.Credentials) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:       tls.Client(pki.Roles(pki.RoleControl)),
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		TLSHandshakeTimeout:   2 * time.Second,
		ResponseHeaderTimeout: forwardTimeout,
		IdleConnTimeout:       30 * time.Second,
	}}
}

// proxyStream sends the request to the leader at addr and streams its
// answer back.
func (s *Server) proxyStream(c *fiber.Ctx, addr string, peer pki.Identity) error {
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+string(c.Request().URI().RequestURI()), nil)
	if err != nil {
		return err
	}
	req.Header.Set(forwardedHeader, s.cfg.NodeID)
	if peer.Role != "" {
		req.Header.Set(forwardedPeerHeader, peer.String())
	}
	if id := c.Get(apierr.RequestIDHeader); id != "" {
		req.Header.Set(apierr.RequestIDHeader, id)
	}
	resp, err := s.streamFwd.Do(req)
	if err != nil {
		s.log.Warn("control: forward to leader failed", "leader", addr, "path", c.Path(), "err", err)
		if neverSent(err) {
			return noLeader()
		}
		return apierr.Retry(apierr.Unavailable, 1, "the control leader did not answer; retry shortly")
	}
	c.Status(resp.StatusCode)
	for _, h := range streamForwardHeaders {
		if v := resp.Header.Get(h); v != "" {
			c.Set(h, v)
		}
	}
	size := -1
	if resp.ContentLength >= 0 {
		size = int(resp.ContentLength)
	}
	return c.SendStream(resp.Body, size) // fasthttp closes the body once sent
}
