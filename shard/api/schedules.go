package api

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/wire"
)

// scheduleRoutes mounts the schedule endpoints on the authenticated API.
// Every {id} is a schedule's id or its name (see scheduleRef).
func (s *Server) scheduleRoutes(api fiber.Router) {
	api.Get("/schedules", s.listSchedules)
	api.Post("/schedules", s.createSchedule)
	api.Post("/schedules/preview", s.previewSchedule) // before /schedules/:id: "preview" is no schedule
	api.Get("/schedules/:id", s.getSchedule)
	api.Put("/schedules/:id", s.updateSchedule)
	api.Delete("/schedules/:id", s.deleteSchedule)
	api.Post("/schedules/:id/enable", func(c *fiber.Ctx) error { return s.setScheduleEnabled(c, true) })
	api.Post("/schedules/:id/disable", func(c *fiber.Ctx) error { return s.setScheduleEnabled(c, false) })
	api.Post("/schedules/:id/run", s.runSchedule)
}

// runSchedule enqueues the schedule's job now (201, as an enqueue).
func (s *Server) runSchedule(c *fiber.Ctx) error {
	lim, err := limits(c)
	if err != nil {
		return err
	}
	out, err := s.svc.RunSchedule(c.UserContext(), ns(c), scope(c), lim, scheduleRef(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (s *Server) listSchedules(c *fiber.Ctx) error {
	list, err := s.svc.ListSchedules(ns(c), scope(c))
	return reply(c, wire.ScheduleList{Schedules: list}, err)
}

func (s *Server) createSchedule(c *fiber.Ctx) error {
	var r wire.ScheduleRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	sc, err := s.svc.CreateSchedule(c.UserContext(), ns(c), scope(c), lim, &r)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(sc)
}

// previewSchedule lists a cron expression's next runs; it touches no
// queue, so the queue scope does not apply.
func (s *Server) previewSchedule(c *fiber.Ctx) error {
	var r wire.SchedulePreviewRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	p, err := s.svc.PreviewSchedule(&r)
	return reply(c, p, err)
}

func (s *Server) getSchedule(c *fiber.Ctx) error {
	sc, err := s.svc.GetSchedule(ns(c), scope(c), scheduleRef(c))
	return reply(c, sc, err)
}

func (s *Server) updateSchedule(c *fiber.Ctx) error {
	var r wire.ScheduleRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	sc, err := s.svc.UpdateSchedule(c.UserContext(), ns(c), scope(c), lim, scheduleRef(c), &r)
	return reply(c, sc, err)
}

func (s *Server) deleteSchedule(c *fiber.Ctx) error {
	if err := s.svc.DeleteSchedule(c.UserContext(), ns(c), scope(c), scheduleRef(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) setScheduleEnabled(c *fiber.Ctx, on bool) error {
	sc, err := s.svc.SetScheduleEnabled(c.UserContext(), ns(c), scope(c), scheduleRef(c), on)
	return reply(c, sc, err)
}

// scheduleRef is the route's {id}: a schedule id ("sch_…") or a schedule's
// name, path-escaped by the caller (a name may hold any character).
func scheduleRef(c *fiber.Ctx) string {
	ref := c.Params("id")
	if u, err := url.PathUnescape(ref); err == nil {
		return u
	}
	return ref
}
