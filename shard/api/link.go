package api

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/shardlink"
)

// A caller of /api/v1 may open a link (internal/shardlink): one
// connection carrying many requests at once, each served here in
// process through the node's own handler, as if it had come on a
// connection of its own. The upgrade is admitted by the same check as
// /api/v1, and every request on the link is judged again by its own
// route's check, with the link's real peer: a link over TLS carries its
// TLS state (never the local gateway's Unix socket identity), one over
// the socket its socket address. A request's caller is gone (clientGone)
// once it cancelled the request or the link ended.

// linkRoutes serves links with the app's handler: called once every
// route is added.
func (s *Server) linkRoutes() {
	s.links = shardlink.NewServer(shardlink.ServerConfig{Handler: s.app.Handler(), MaxBody: MaxRequestBody,
		MaxHead: readBuffer, Logger: s.cfg.Logger})
	s.app.Get(shardlink.Path, pki.Require(s.jobCallers(), &localGateway), s.openLink)
}

// openLink upgrades the connection to a link.
func (s *Server) openLink(c *fiber.Ctx) error {
	err := s.links.Upgrade(c.Context())
	switch {
	case errors.Is(err, shardlink.ErrNotUpgrade):
		return apierr.Field("Upgrade", "%v", err)
	case errors.Is(err, shardlink.ErrTooManyLinks):
		return apierr.Retry(apierr.Unavailable, 30, "%v", err) // the caller goes on its pool meanwhile
	case err != nil:
		return apierr.New(apierr.BadRequest, "%v", err)
	}
	return nil
}

// shutdownLinks stops reading the links' requests, lets those in flight
// answer until ctx ends, and closes the links.
func (s *Server) shutdownLinks(ctx context.Context) { s.links.Shutdown(ctx) }
