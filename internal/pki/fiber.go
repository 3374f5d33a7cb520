package pki

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// Peer is the verified identity of the client of c: from its TLS
// certificate, or local when it came over a Unix socket (which only this
// host's processes with access to the socket file can reach).
func Peer(c *fiber.Ctx, local *Identity) (Identity, bool) {
	if local != nil && c.Context().LocalAddr().Network() == "unix" {
		return *local, true
	}
	return PeerIdentity(c.Context().TLSConnectionState())
}

// Require admits requests from a peer p accepts: 401 without a client
// certificate, 403 for a certificate p refuses. local is the identity of
// requests over a Unix socket (nil: they are refused as anonymous). The
// peer is left in c.Locals("peer") for handlers that check more.
func Require(p Policy, local *Identity) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, ok := Peer(c, local)
		if !ok {
			return apierr.New(apierr.Unauthenticated, "this endpoint is internal: a client certificate from the deployment's CA is required")
		}
		if err := p(id); err != nil {
			return apierr.New(apierr.Forbidden, "%s may not call this endpoint", id)
		}
		c.Locals(peerKey{}, id)
		return c.Next()
	}
}

type peerKey struct{}

// RequiredPeer is the identity Require admitted for c.
func RequiredPeer(c *fiber.Ctx) Identity {
	id, _ := c.Locals(peerKey{}).(Identity)
	return id
}
