package shard

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"
)

// ScheduleView is the JSON shape of a schedule.
type ScheduleView struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Queue      string          `json:"queue"`
	Cron       string          `json:"cron"`
	Timezone   string          `json:"timezone"`
	Payload    json.RawMessage `json:"payload"`
	Priority   string          `json:"priority"`
	UniqueKey  *string         `json:"unique_key"`
	MaxRetries int             `json:"max_retries"`
	Enabled    bool            `json:"enabled"`
	NextRun    *time.Time      `json:"next_run"`
	LastRun    *time.Time      `json:"last_run"`
	LastJobID  *string         `json:"last_job_id"`
	CreatedAt  *time.Time      `json:"created_at"`
	UpdatedAt  *time.Time      `json:"updated_at"`
}

func scheduleView(s *schedule) *ScheduleView {
	v := &ScheduleView{
		ID: s.ID, Name: s.Name, Queue: s.Queue, Cron: s.Cron, Timezone: s.Timezone,
		Payload: nullable(s.Payload), Priority: s.Priority.String(), MaxRetries: s.MaxRetries, Enabled: s.Enabled,
		NextRun: ts(s.NextRun), LastRun: ts(s.LastRun), CreatedAt: ts(s.CreatedAt), UpdatedAt: ts(s.UpdatedAt),
	}
	if s.UniqueKey != "" {
		v.UniqueKey = &s.UniqueKey
	}
	if s.LastJobID != "" {
		v.LastJobID = &s.LastJobID
	}
	return v
}

// scheduleRoutes mounts the schedule endpoints on the authenticated API.
func (s *Server) scheduleRoutes(api fiber.Router) {
	api.Get("/schedules", s.listSchedules)
	api.Post("/schedules", s.createSchedule)
	api.Get("/schedules/:id", s.getSchedule)
	api.Put("/schedules/:id", s.updateSchedule)
	api.Delete("/schedules/:id", s.deleteSchedule)
	api.Post("/schedules/:id/enable", s.enableSchedule)
	api.Post("/schedules/:id/disable", s.disableSchedule)
}

func (s *Server) listSchedules(c *fiber.Ctx) error {
	list, err := s.ListSchedules(ns(c))
	if err != nil {
		return err
	}
	out := make([]*ScheduleView, len(list))
	for i, sc := range list {
		out[i] = scheduleView(sc)
	}
	return c.JSON(fiber.Map{"schedules": out})
}

func (s *Server) createSchedule(c *fiber.Ctx) error {
	var r ScheduleRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	sc, err := s.CreateSchedule(c.UserContext(), ns(c), &r)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(scheduleView(sc))
}

func (s *Server) getSchedule(c *fiber.Ctx) error {
	sc, err := s.GetSchedule(ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(scheduleView(sc))
}

func (s *Server) updateSchedule(c *fiber.Ctx) error {
	var r ScheduleRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	sc, err := s.UpdateSchedule(c.UserContext(), ns(c), c.Params("id"), &r)
	if err != nil {
		return err
	}
	return c.JSON(scheduleView(sc))
}

func (s *Server) deleteSchedule(c *fiber.Ctx) error {
	if err := s.DeleteSchedule(c.UserContext(), ns(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) enableSchedule(c *fiber.Ctx) error  { return s.setScheduleEnabled(c, true) }
func (s *Server) disableSchedule(c *fiber.Ctx) error { return s.setScheduleEnabled(c, false) }

func (s *Server) setScheduleEnabled(c *fiber.Ctx, on bool) error {
	sc, err := s.SetScheduleEnabled(c.UserContext(), ns(c), c.Params("id"), on)
	if err != nil {
		return err
	}
	return c.JSON(scheduleView(sc))
}
