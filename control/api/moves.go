package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/wire"
)

// The operator's live namespace moves (see moves.go), behind op and
// operatorOnly like every /control/v1 route.

func (s *Server) moveRoutes(app fiber.Router, op fiber.Handler) {
	app.Post("/control/v1/namespaces/:tid/:ns/move", op, s.operatorOnly, s.postMove)
	app.Get("/control/v1/moves", op, s.operatorOnly, s.getMoves)
	app.Get("/control/v1/moves/:id", op, s.operatorOnly, s.getMove)
	app.Post("/control/v1/moves/:id/cancel", op, s.operatorOnly, s.postMoveCancel)
}

func (s *Server) postMove(c *fiber.Ctx) error {
	var req wire.NamespaceMoveRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	m, err := s.StartMove(c.UserContext(), c.Params("tid"), c.Params("ns"), req.ToShard)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(m)
}

func (s *Server) getMoves(c *fiber.Ctx) error {
	list, err := s.Moves(c.UserContext(), service.MoveFilter{Tenant: c.Query("tenant"), Namespace: c.Query("namespace"), State: c.Query("state")})
	if err != nil {
		return err
	}
	return c.JSON(wire.MoveList{Moves: list})
}

func (s *Server) getMove(c *fiber.Ctx) error {
	m, err := s.Move(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(m)
}

// postMoveCancel answers 200 with the move once cancelled, or 202 with it
// while its cleanup is still running.
func (s *Server) postMoveCancel(c *fiber.Ctx) error {
	m, done, err := s.CancelMove(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	if !done {
		c.Status(fiber.StatusAccepted)
	}
	return c.JSON(m)
}
