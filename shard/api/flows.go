package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// flowRoutes serves the list of batches and a job's chain; a batch by id
// is a job route (jobs.go).
func (s *Server) flowRoutes(api fiber.Router) {
	api.Get("/batches", s.listBatches)
	api.Get("/jobs/:id/chain", s.getChain)
}

// listBatches answers GET /api/v1/batches?limit=&cursor=: the namespace's
// batches, newest first.
func (s *Server) listBatches(c *fiber.Ctx) error {
	q := service.BatchQuery{Cursor: c.Query("cursor")}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return apierr.Field("limit", "limit must be a whole number between 1 and %d", wire.MaxBatchListLimit)
		}
		q.Limit = n
	}
	page, err := s.svc.ListBatches(ns(c), scope(c), q)
	return reply(c, page, err)
}

// getChain answers GET /api/v1/jobs/{id}/chain: the chain the job is a
// step of, its steps in order with their jobs' states.
func (s *Server) getChain(c *fiber.Ctx) error {
	v, err := s.svc.GetChain(ns(c), scope(c), c.Params("id"))
	return reply(c, v, err)
}
