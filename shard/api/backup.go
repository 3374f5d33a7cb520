package api

import (
	"bufio"
	"bytes"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

const (
	backupPath  = "/internal/v1/backup"
	restorePath = "/internal/v1/restore"
)

// backupRoutes serves a namespace's backup and restore to control alone,
// on the leader: a follower answers 503 no_leader with the leader's
// address (wire.LeaderHeader) rather than proxy a stream of any size.
func (s *Server) backupRoutes() {
	control := pki.Require(pki.Roles(pki.RoleControl), nil)
	s.app.Get(backupPath, control, s.group.LeaderOnly, s.backup)
	s.app.Post(restorePath, control, s.group.LeaderOnly, s.restore)
}

// backup streams the namespace as it is at one snapshot. An error once
// the answer started cuts the stream short, which its reader refuses (no
// verified trailer).
func (s *Server) backup(c *fiber.Ctx) error {
	nsName := ns(c)
	if err := service.NamespaceOK(nsName); err != nil {
		return err
	}
	src := service.BackupSource{ShardID: s.cfg.ShardID, Now: time.Now()}
	c.Set(fiber.HeaderContentType, wire.BackupContentType)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if _, err := s.svc.Backup(nsName, src, w); err != nil {
			s.cfg.Logger.Warn("shard: backup cut short", "ns", nsName, "err", err)
			return
		}
		_ = w.Flush()
	})
	return nil
}

func (s *Server) restore(c *fiber.Ctx) error {
	var replace bool
	switch mode := c.Query("mode"); mode {
	case wire.RestoreNew:
	case wire.RestoreReplace:
		replace = true
	default:
		return apierr.Field("mode", "mode must be %q or %q, not %q", wire.RestoreNew, wire.RestoreReplace, mode)
	}
	var body io.Reader = bytes.NewReader(c.Body())
	if c.Request().IsBodyStream() {
		body = c.Context().RequestBodyStream()
	}
	res, err := s.svc.Restore(c.UserContext(), ns(c), replace, body)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

// streamedBodies bounds a body to MaxRequestBody on every route but a
// restore's: the server streams request bodies (a restore's may be larger
// than any other), so the limit is kept here. A body of known length reads
// as before; a chunked one is read up to the limit.
func streamedBodies(c *fiber.Ctx) error {
	req := c.Request()
	if !req.IsBodyStream() || c.Path() == restorePath || c.Path() == moveApplyPath {
		return c.Next()
	}
	switch cl := req.Header.ContentLength(); {
	case cl > MaxRequestBody:
		return fiber.ErrRequestEntityTooLarge
	case cl == -1:
		b, err := io.ReadAll(io.LimitReader(c.Context().RequestBodyStream(), MaxRequestBody+1))
		if err != nil {
			return apierr.New(apierr.BadRequest, "reading the request body: %v", err)
		}
		if len(b) > MaxRequestBody {
			return fiber.ErrRequestEntityTooLarge
		}
		req.SetBodyRaw(b)
	}
	return c.Next()
}

// restoreGate answers 503 for a namespace a restore is writing; deleting
// the namespace is let through (it ends an interrupted restore). It
// answers 503 namespace_moving, with wire.MovingHeader, for a namespace a
// move fences or moved away, and marks the same refusal of a command's
// apply (a fence that committed after the request passed here).
func (s *Server) restoreGate(c *fiber.Ctx) error {
	nsName := ns(c)
	if m := s.svc.Moving(nsName); m != "" {
		c.Set(wire.MovingHeader, m)
		if m == wire.MovingMoved {
			return engine.ErrMoved
		}
		return engine.ErrFenced
	}
	if s.svc.Restoring(nsName) && (c.Method() != fiber.MethodDelete || c.Path() != "/api/v1/namespace") {
		return engine.ErrRestoring
	}
	err := c.Next()
	if err != nil && apierr.CodeOf(err) == apierr.NamespaceMoving && len(c.Response().Header.Peek(wire.MovingHeader)) == 0 {
		m := wire.MovingFenced
		if s.svc.Moving(nsName) == wire.MovingMoved {
			m = wire.MovingMoved
		}
		c.Set(wire.MovingHeader, m)
	}
	return err
}
