package api

import (
	"bufio"
	"bytes"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// The routes of a live namespace move (docs/internal-api.md, "Live
// namespace moves"): control alone calls them, on the leader.
const (
	movePath      = "/internal/v1/move"
	moveApplyPath = movePath + "/apply"
)

func (s *Server) moveRoutes() {
	g := s.app.Group(movePath, pki.Require(pki.Roles(pki.RoleControl), nil), s.group.LeaderOnly)
	// The source.
	g.Get("/snapshot", s.moveSnapshot)
	g.Get("/delta", s.moveDelta)
	g.Post("/fence", s.moveFence)
	g.Post("/unfence", func(c *fiber.Ctx) error { return done(c, s.svc.MoveUnfence(c.UserContext(), ns(c), moveToken(c))) })
	g.Post("/finish", s.moveFinish)
	// The target.
	g.Post("/begin", func(c *fiber.Ctx) error { return done(c, s.svc.MoveBegin(c.UserContext(), ns(c), moveToken(c))) })
	g.Post("/apply", s.moveApply)
	g.Post("/end", func(c *fiber.Ctx) error { return done(c, s.svc.MoveEnd(c.UserContext(), ns(c), moveToken(c))) })
	g.Post("/abort", func(c *fiber.Ctx) error { return done(c, s.svc.MoveAbort(c.UserContext(), ns(c), moveToken(c))) })
}

func moveToken(c *fiber.Ctx) string { return c.Get(wire.MoveTokenHeader) }

// done answers a step that returns nothing.
func done(c *fiber.Ctx, err error) error {
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true})
}

func (s *Server) moveSnapshot(c *fiber.Ctx) error {
	nsName, token := ns(c), moveToken(c)
	if err := service.NamespaceOK(nsName); err != nil {
		return err
	}
	if err := service.MoveTokenOK(token); err != nil {
		return err
	}
	return s.moveStream(c, "snapshot", func(w io.Writer, src service.BackupSource) (backup.Manifest, error) {
		return s.svc.MoveSnapshot(nsName, token, src, w)
	})
}

func (s *Server) moveDelta(c *fiber.Ctx) error {
	nsName, token := ns(c), moveToken(c)
	if err := s.svc.MoveSessionOK(nsName, token); err != nil {
		return err
	}
	return s.moveStream(c, "delta", func(w io.Writer, src service.BackupSource) (backup.Manifest, error) {
		return s.svc.MoveDelta(nsName, token, src, w)
	})
}

// moveStream answers with a stream write makes. An error once the answer
// started cuts the stream short, which its reader refuses.
func (s *Server) moveStream(c *fiber.Ctx, what string, write func(io.Writer, service.BackupSource) (backup.Manifest, error)) error {
	src := service.BackupSource{ShardID: s.cfg.ShardID, Now: time.Now()}
	nsName := ns(c)
	c.Set(fiber.HeaderContentType, wire.BackupContentType)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if _, err := write(w, src); err != nil {
			s.cfg.Logger.Warn("shard: move stream cut short", "what", what, "ns", nsName, "err", err)
			return
		}
		_ = w.Flush()
	})
	return nil
}

func (s *Server) moveFence(c *fiber.Ctx) error {
	var req struct {
		TTLMS *int64 `json:"ttl_ms"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.TTLMS == nil || *req.TTLMS < 1000 || *req.TTLMS > 120000 {
		return apierr.Field("ttl_ms", "ttl_ms must be between 1000 and 120000")
	}
	until, err := s.svc.MoveFence(c.UserContext(), ns(c), moveToken(c), time.Duration(*req.TTLMS)*time.Millisecond)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "fenced_until": until})
}

func (s *Server) moveFinish(c *fiber.Ctx) error {
	var req struct {
		ToShard string `json:"to_shard"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := s.svc.MoveFinish(c.UserContext(), ns(c), moveToken(c), req.ToShard); err != nil {
		return err
	}
	s.events.Nudge(ns(c)) // its event streams end
	return done(c, nil)
}

func (s *Server) moveApply(c *fiber.Ctx) error {
	var body io.Reader = bytes.NewReader(c.Body())
	if c.Request().IsBodyStream() {
		body = c.Context().RequestBodyStream()
	}
	res, err := s.svc.MoveApply(c.UserContext(), ns(c), moveToken(c), body)
	if err != nil {
		return err
	}
	return c.JSON(res)
}
