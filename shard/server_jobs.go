package shard

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// JobOpResponse is the reply to retry and move.
type JobOpResponse struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Queue  string `json:"queue,omitempty"`
}

func (s *Server) retryJob(c *fiber.Ctx) error {
	if err := decodeBody(c.Body(), &struct{}{}, true); err != nil {
		return err
	}
	st, err := s.RetryJob(c.UserContext(), ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(JobOpResponse{JobID: c.Params("id"), Status: st.String()})
}

func (s *Server) cancelJob(c *fiber.Ctx) error {
	if err := decodeBody(c.Body(), &struct{}{}, true); err != nil {
		return err
	}
	st, err := s.CancelJob(c.UserContext(), ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": st})
}

func (s *Server) moveJob(c *fiber.Ctx) error {
	var r MoveRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	st, err := s.MoveJob(c.UserContext(), ns(c), c.Params("id"), &r)
	if err != nil {
		return err
	}
	return c.JSON(JobOpResponse{JobID: c.Params("id"), Status: st.String(), Queue: r.Queue})
}

func (s *Server) deleteJob(c *fiber.Ctx) error {
	if err := s.DeleteJob(c.UserContext(), ns(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) listDead(c *fiber.Ctx) error {
	q := DeadQuery{Queue: c.Query("queue"), Cursor: c.Query("cursor")}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return apierr.Field("limit", "limit must be a whole number")
		}
		if n == 0 {
			return apierr.Field("limit", "limit must be between 1 and %d", MaxDeadLimit)
		}
		q.Limit = n
	}
	page, err := s.ListDead(ns(c), q)
	if err != nil {
		return err
	}
	return c.JSON(page)
}
