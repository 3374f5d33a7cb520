package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// queueRoutes mounts the queue endpoints on the authenticated API; every
// route of one queue passes queueInScope first.
func (s *Server) queueRoutes(api fiber.Router) {
	api.Get("/queues", s.listQueues)
	q := api.Group("/queues/:name", queueInScope)
	q.Get("", s.getQueue)
	q.Put("", s.putQueue)
	q.Delete("", s.deleteQueue)
	q.Post("/pause", s.pauseQueue)
	q.Post("/resume", s.resumeQueue)
	q.Post("/drain", s.drainQueue)
	q.Post("/clear", s.clearQueue)
	q.Post("/concurrency", s.setConcurrency)
	q.Delete("/concurrency", s.removeConcurrency)
	q.Post("/throttle", s.setThrottle)
	q.Delete("/throttle", s.removeThrottle)
	q.Post("/defaults", s.setQueueDefaults)
	q.Get("/stats", s.queueStats)
	q.Get("/scale", s.queueScale)
}

// queueStats answers a queue's history (service.QueueStats).
func (s *Server) queueStats(c *fiber.Ctx) error {
	st, err := s.svc.QueueStats(ns(c), c.Params("name"), c.Query("from"), c.Query("to"), c.Query("step"))
	return reply(c, st, err)
}

// queueScale answers what an autoscaler reads of a queue.
func (s *Server) queueScale(c *fiber.Ctx) error {
	v, err := s.svc.QueueScale(ns(c), c.Params("name"))
	return reply(c, v, err)
}

// reply encodes a service answer, or returns its error.
func reply[T any](c *fiber.Ctx, v T, err error) error {
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (s *Server) listQueues(c *fiber.Ctx) error {
	list, err := s.svc.ListQueues(ns(c), scope(c))
	return reply(c, wire.QueueList{Queues: list}, err)
}

func (s *Server) getQueue(c *fiber.Ctx) error {
	q, err := s.svc.GetQueue(ns(c), c.Params("name"))
	return reply(c, q, err)
}

func (s *Server) putQueue(c *fiber.Ctx) error {
	var r wire.QueueSpec
	if err := decode(c, &r); err != nil {
		return err
	}
	q, err := s.svc.PutQueue(c.UserContext(), ns(c), c.Params("name"), &r)
	return reply(c, q, err)
}

func (s *Server) pauseQueue(c *fiber.Ctx) error {
	q, err := s.svc.PauseQueue(c.UserContext(), ns(c), c.Params("name"))
	return reply(c, q, err)
}

func (s *Server) resumeQueue(c *fiber.Ctx) error {
	q, err := s.svc.ResumeQueue(c.UserContext(), ns(c), c.Params("name"))
	return reply(c, q, err)
}

func (s *Server) drainQueue(c *fiber.Ctx) error {
	d, err := s.svc.DrainQueue(c.UserContext(), ns(c), c.Params("name"))
	return reply(c, d, err)
}

func (s *Server) clearQueue(c *fiber.Ctx) error {
	q := c.Params("name")
	n, err := s.svc.ClearQueue(c.UserContext(), ns(c), q)
	return reply(c, wire.ClearResponse{Queue: q, Cleared: n}, err)
}

func (s *Server) deleteQueue(c *fiber.Ctx) error {
	q := c.Params("name")
	if err := service.CheckQueue(ns(c), q); err != nil {
		return err
	}
	if c.Query("confirm") != "true" {
		return apierr.Field("confirm", "deleting queue %q removes all its jobs: add ?confirm=true", q)
	}
	n, err := s.svc.DeleteQueue(c.UserContext(), ns(c), q)
	return reply(c, wire.QueueDeleteResponse{Queue: q, Deleted: true, JobsDeleted: n}, err)
}

func (s *Server) setConcurrency(c *fiber.Ctx) error {
	var r wire.ConcurrencyRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	q, err := s.svc.SetConcurrency(c.UserContext(), ns(c), c.Params("name"), &r)
	return reply(c, q, err)
}

func (s *Server) removeConcurrency(c *fiber.Ctx) error {
	q, err := s.svc.RemoveConcurrency(c.UserContext(), ns(c), c.Params("name"))
	return reply(c, q, err)
}

func (s *Server) setThrottle(c *fiber.Ctx) error {
	var r wire.ThrottleRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	q, err := s.svc.SetThrottle(c.UserContext(), ns(c), c.Params("name"), &r)
	return reply(c, q, err)
}

func (s *Server) removeThrottle(c *fiber.Ctx) error {
	q, err := s.svc.RemoveThrottle(c.UserContext(), ns(c), c.Params("name"))
	return reply(c, q, err)
}

func (s *Server) setQueueDefaults(c *fiber.Ctx) error {
	var r wire.QueueDefaults
	if err := decode(c, &r); err != nil {
		return err
	}
	q, err := s.svc.SetQueueDefaults(c.UserContext(), ns(c), c.Params("name"), &r)
	return reply(c, q, err)
}
