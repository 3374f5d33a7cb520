package shard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
)

func ns(c *fiber.Ctx) string { return string(c.Request().Header.Peek(NamespaceHeader)) }

// EnqueueResponse is the reply to a single enqueue.
type EnqueueResponse struct {
	JobID          string `json:"job_id"`
	Status         string `json:"status"`
	UniqueExisting bool   `json:"unique_existing"`
}

func (s *Server) enqueue(c *fiber.Ctx) error {
	var r EnqueueRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	res, err := s.Enqueue(c.UserContext(), ns(c), []EnqueueRequest{r}, false)
	if err != nil {
		return err
	}
	out := res[0]
	status := fiber.StatusCreated
	if out.Existing {
		status = fiber.StatusOK // nothing was created
	}
	return c.Status(status).JSON(EnqueueResponse{JobID: out.JobID, Status: out.State.String(), UniqueExisting: out.Existing})
}

// BatchRequest is the body of enqueue/batch.
type BatchRequest struct {
	Jobs  []EnqueueRequest `json:"jobs"`
	Batch *BatchSpec       `json:"batch"` // a callback when all jobs finished (batches.go)
}

// BatchResponse lists the ids in request order, and each job's outcome.
type BatchResponse struct {
	JobIDs  []string          `json:"job_ids"`
	BatchID string            `json:"batch_id,omitempty"`
	Jobs    []EnqueueResponse `json:"jobs"`
}

func (s *Server) enqueueBatch(c *fiber.Ctx) error {
	var r BatchRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	res, batchID, err := s.EnqueueBatch(c.UserContext(), ns(c), r.Jobs, r.Batch)
	if err != nil {
		return err
	}
	out := BatchResponse{JobIDs: make([]string, len(res)), BatchID: batchID, Jobs: make([]EnqueueResponse, len(res))}
	for i, x := range res {
		out.JobIDs[i] = x.JobID
		out.Jobs[i] = EnqueueResponse{JobID: x.JobID, Status: x.State.String(), UniqueExisting: x.Existing}
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (s *Server) fetch(c *fiber.Ctx) error {
	var r FetchRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	start := time.Now()
	s.workers.seen(ns(c), r.WorkerID, r.Hostname, r.Queues)
	j, err := s.Fetch(c.UserContext(), ns(c), &r)
	if err != nil {
		return err
	}
	if j == nil {
		return c.SendStatus(fiber.StatusNoContent)
	}
	observeFetch(ns(c), start)
	return c.JSON(fetchedView(j))
}

func (s *Server) ack(c *fiber.Ctx) error {
	var r AckRequest
	if err := decodeBody(c.Body(), &r, true); err != nil {
		return err
	}
	st, err := s.Ack(c.UserContext(), ns(c), c.Params("id"), &r)
	if err != nil {
		return err
	}
	c.Type("json")
	if st == job.Cancelled {
		return c.Send(ackCancelledReply)
	}
	return c.Send(ackReply)
}

// ackReply is the body of a successful ack; ackCancelledReply answers the
// ack of a job cancelled while it ran.
var (
	ackReply          = []byte(`{"status":"completed"}`)
	ackCancelledReply = []byte(`{"status":"cancelled"}`)
)

// FailResponse is the reply to fail.
type FailResponse struct {
	Status            string     `json:"status"`
	NextAttemptAt     *time.Time `json:"next_attempt_at,omitempty"`
	AttemptsRemaining int        `json:"attempts_remaining"`
	Reason            string     `json:"reason,omitempty"`
}

func (s *Server) fail(c *fiber.Ctx) error {
	var r FailRequest
	if err := decodeBody(c.Body(), &r, true); err != nil {
		return err
	}
	out, err := s.Fail(c.UserContext(), ns(c), c.Params("id"), &r)
	if err != nil {
		return err
	}
	resp := FailResponse{Status: out.State.String(), AttemptsRemaining: out.Remaining, Reason: out.Reason}
	if out.State == job.Retrying || out.State == job.Pending {
		resp.NextAttemptAt = ts(out.NextAttempt)
	}
	return c.JSON(resp)
}

// HeartbeatStatus is one job's heartbeat reply.
type HeartbeatStatus struct {
	Status string `json:"status"`
}

func (s *Server) heartbeat(c *fiber.Ctx) error {
	var r HeartbeatRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	s.workers.seen(ns(c), r.WorkerID, "", nil)
	res, err := s.Heartbeat(c.UserContext(), ns(c), &r)
	if err != nil {
		return err
	}
	out := make(map[string]HeartbeatStatus, len(res))
	for id, st := range res {
		out[id] = HeartbeatStatus{Status: st}
	}
	return c.JSON(fiber.Map{"jobs": out})
}

func (s *Server) getJob(c *fiber.Ctx) error {
	j, err := s.GetJob(ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(detailView(j))
}

// decodeBody decodes a JSON object strictly: unknown fields are refused so
// a misspelt option is an error, not silently ignored. It uses goccy's
// encoding/json-compatible decoder, which halved the time an enqueue batch
// spends in decoding.
func decodeBody(body []byte, v any, emptyOK bool) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		if emptyOK {
			return nil
		}
		return apierr.New(apierr.InvalidJSON, "request body must be a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return apierr.New(apierr.InvalidJSON, "request body must hold one JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &apierr.Error{Code: apierr.InvalidJSON, Field: te.Field, Message: fmt.Sprintf("%s must be %s, not %s", te.Field, te.Type, te.Value)}
	case errors.As(err, &se):
		return apierr.New(apierr.InvalidJSON, "malformed JSON at byte %d: %v", se.Offset, se)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &apierr.Error{Code: apierr.BadRequest, Field: f, Message: fmt.Sprintf("unknown field %q", f)}
	}
	return apierr.New(apierr.InvalidJSON, "malformed JSON: %v", err)
}
