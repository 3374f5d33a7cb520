package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// batchRoutes serves the list of batches; a batch by id is a job route
// (jobs.go), registered after this one so "/batches" is not an id.
func (s *Server) batchRoutes(api fiber.Router) {
	api.Get("/batches", s.listBatches)
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
