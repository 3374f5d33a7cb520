package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/tracing"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

func (s *Server) jobRoutes(api fiber.Router) {
	api.Post("/enqueue", s.enqueue)
	api.Post("/enqueue/batch", s.enqueueBatch)
	api.Post("/fetch", s.fetch)
	api.Post("/fetch/batch", s.fetchBatch)
	api.Post("/release", s.release)
	api.Post("/ack/batch", s.ackBatch) // before /ack/:id, which would match it
	api.Post("/ack/:id", s.ack)
	api.Post("/fail/:id", s.fail)
	api.Post("/heartbeat", s.heartbeat)
	api.Get("/jobs/:id", s.getJob)
	api.Post("/jobs/:id/retry", s.retryJob)
	api.Post("/jobs/:id/cancel", s.cancelJob)
	api.Post("/jobs/:id/move", s.moveJob)
	api.Delete("/jobs/:id", s.deleteJob)
	api.Get("/dead", s.listDead)
	api.Get("/batches/:id", s.getBatch)
}

func (s *Server) enqueue(c *fiber.Ctx) error {
	start := s.traceStart()
	var r wire.EnqueueRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	parent, state, err := traceHeaders(c)
	if err != nil {
		return err
	}
	withTrace(&r.TraceParent, &r.TraceState, parent, state)
	lim, err := limits(c)
	if err != nil {
		return err
	}
	out, err := s.svc.Enqueue(c.UserContext(), ns(c), scope(c), lim, &r)
	if s.tr != nil {
		var ids []string
		if out != nil {
			ids = []string{out.JobID}
		}
		s.traceSend(c, start, false, []wire.EnqueueRequest{r}, ids, err)
	}
	if err != nil {
		return err
	}
	status := fiber.StatusCreated
	if out.UniqueExisting {
		status = fiber.StatusOK // nothing was created
	}
	return c.Status(status).JSON(out)
}

func (s *Server) enqueueBatch(c *fiber.Ctx) error {
	start := s.traceStart()
	var r wire.BatchRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	parent, state, err := traceHeaders(c)
	if err != nil {
		return err
	}
	for i := range r.Jobs {
		withTrace(&r.Jobs[i].TraceParent, &r.Jobs[i].TraceState, parent, state)
	}
	if r.Batch != nil {
		withTrace(&r.Batch.TraceParent, &r.Batch.TraceState, parent, state)
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	out, err := s.svc.EnqueueBatch(c.UserContext(), ns(c), scope(c), lim, &r)
	if s.tr != nil {
		var ids []string
		if out != nil {
			ids = out.JobIDs
		}
		s.traceSend(c, start, true, r.Jobs, ids, err)
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// traceHeaders reads and checks an enqueue's W3C trace context headers
// (wire.TraceParentHeader, wire.TraceStateHeader): a bad one is a 400
// naming it, whether or not a job names its own.
func traceHeaders(c *fiber.Ctx) (parent, state string, err error) {
	// Copies: fiber's strings alias the request's buffer.
	parent, state = strings.Clone(c.Get(wire.TraceParentHeader)), strings.Clone(c.Get(wire.TraceStateHeader))
	return parent, state, service.CheckTraceHeaders(parent, state)
}

// withTrace gives a job that names no trace context the headers' (the
// pair, never one of each).
func withTrace(jobParent, jobState *string, parent, state string) {
	if *jobParent == "" && *jobState == "" {
		*jobParent, *jobState = parent, state
	}
}

func (s *Server) fetch(c *fiber.Ctx) error {
	var r wire.FetchRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	if err := service.AllowQueues(scope(c), "queues", r.Queues); err != nil {
		return err // before the worker is recorded with them
	}
	start := time.Now()
	s.workers.Seen(ns(c), r.WorkerID, r.Hostname, r.Queues)
	if s.workers.Draining(ns(c), r.WorkerID) {
		c.Set(wire.WorkerDrainHeader, "true")
		return c.SendStatus(fiber.StatusNoContent)
	}
	s.workers.Fetched(ns(c), r.Queues)
	j, err := s.svc.Fetch(c.UserContext(), ns(c), &r, s.goneOrDrained(c, r.WorkerID))
	if err != nil {
		return err
	}
	if j == nil {
		if s.workers.Draining(ns(c), r.WorkerID) {
			c.Set(wire.WorkerDrainHeader, "true")
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
	live.ObserveFetch(ns(c), start)
	if s.tr != nil {
		s.traceReceive(c, start, []wire.FetchedJob{*j})
	}
	c.Set(wire.LeasedHeader, "1")
	return c.JSON(j)
}

// fetchBatch answers 200 {"jobs":[…]} always: an empty list when the wait
// ended with no job. A fetch naming its worker waits for the worker's news
// too, and its answer carries the worker's cancelled jobs (cancels).
func (s *Server) fetchBatch(c *fiber.Ctx) error {
	var r wire.FetchBatchRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	if err := service.AllowQueues(scope(c), "queues", r.Queues); err != nil {
		return err
	}
	start := time.Now()
	s.workers.Seen(ns(c), r.WorkerID, r.Hostname, r.Queues)
	if s.workers.Draining(ns(c), r.WorkerID) {
		c.Set(wire.WorkerDrainHeader, "true")
		return c.JSON(wire.FetchBatchResponse{Jobs: []wire.FetchedJob{}, Cancels: s.workers.TakeCancels(ns(c), r.WorkerID, scope(c))})
	}
	if r.Max == nil || *r.Max != 0 { // a fetch that leases nothing is no pull worker's demand
		s.workers.Fetched(ns(c), r.Queues)
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	var news service.News
	if r.WorkerID != "" {
		news = s.workers.News(ns(c), r.WorkerID, scope(c))
	}
	jobs, err := s.svc.FetchBatch(c.UserContext(), ns(c), lim, &r, s.goneOrDrained(c, r.WorkerID), news)
	if err != nil {
		return err
	}
	if len(jobs) == 0 && s.workers.Draining(ns(c), r.WorkerID) {
		c.Set(wire.WorkerDrainHeader, "true")
	}
	if len(jobs) > 0 {
		live.ObserveFetch(ns(c), start)
		if s.tr != nil {
			s.traceReceive(c, start, jobs)
		}
		c.Set(wire.LeasedHeader, strconv.Itoa(len(jobs)))
	}
	return c.JSON(wire.FetchBatchResponse{Jobs: jobs, Cancels: s.workers.TakeCancels(ns(c), r.WorkerID, scope(c))})
}

// release gives back leases a worker never received (wire.ReleaseRequest).
func (s *Server) release(c *fiber.Ctx) error {
	var r wire.ReleaseRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	out, err := s.svc.Release(c.UserContext(), ns(c), scope(c), &r)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// ackReply is the body of a successful ack; ackCancelledReply answers the
// ack of a job cancelled while it ran.
var (
	ackReply          = []byte(`{"status":"completed"}`)
	ackCancelledReply = []byte(`{"status":"cancelled"}`)
)

func (s *Server) ack(c *fiber.Ctx) error {
	var r wire.AckRequest
	if err := decodeOptional(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	if s.tr != nil {
		start, m := time.Now(), s.jobMessage(c, c.Params("id"))
		st, err := s.svc.Ack(c.UserContext(), ns(c), scope(c), lim, m.ID, &r)
		s.tr.Settle(ns(c), "ack", m, st, start, errType(err))
		if err != nil {
			return err
		}
		return ackAnswer(c, st)
	}
	st, err := s.svc.Ack(c.UserContext(), ns(c), scope(c), lim, c.Params("id"), &r)
	if err != nil {
		return err
	}
	return ackAnswer(c, st)
}

func ackAnswer(c *fiber.Ctx, st string) error {
	c.Type("json")
	if st == wire.StateCancelled {
		return c.Send(ackCancelledReply)
	}
	return c.Send(ackReply)
}

func (s *Server) ackBatch(c *fiber.Ctx) error {
	var r wire.AckBatchRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	var start time.Time
	var msgs []tracing.Message
	if s.tr != nil {
		start, msgs = time.Now(), make([]tracing.Message, len(r.Acks))
		for i := range r.Acks {
			msgs[i] = s.jobMessage(c, r.Acks[i].JobID)
		}
	}
	res, err := s.svc.AckBatch(c.UserContext(), ns(c), scope(c), lim, &r)
	if s.tr != nil {
		for i := range msgs {
			st, et := "", errType(err)
			if err == nil {
				st = res[i].Status
				if res[i].Error != nil {
					et = string(res[i].Error.Code)
				}
			}
			s.tr.Settle(ns(c), "ack", msgs[i], st, start, et)
		}
	}
	if err != nil {
		return err
	}
	return c.JSON(wire.AckBatchResponse{Results: res})
}

func (s *Server) fail(c *fiber.Ctx) error {
	var r wire.FailRequest
	if err := decodeOptional(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	var start time.Time
	var m tracing.Message
	if s.tr != nil {
		start, m = time.Now(), s.jobMessage(c, c.Params("id"))
	}
	out, err := s.svc.Fail(c.UserContext(), ns(c), scope(c), c.Params("id"), &r)
	if s.tr != nil {
		st := ""
		if out != nil {
			st = out.Status
		}
		s.tr.Settle(ns(c), "fail", m, st, start, errType(err))
	}
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (s *Server) heartbeat(c *fiber.Ctx) error {
	var r wire.HeartbeatRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	if err := service.ClientWorkerID(r.WorkerID); err != nil {
		return err
	}
	lim, err := limits(c)
	if err != nil {
		return err
	}
	s.workers.Seen(ns(c), r.WorkerID, "", nil)
	res, err := s.svc.Heartbeat(c.UserContext(), ns(c), scope(c), lim, &r)
	if err != nil {
		return err
	}
	out := wire.HeartbeatResponse{Jobs: make(map[string]wire.StatusResponse, len(res)), Drain: s.workers.Draining(ns(c), r.WorkerID)}
	for id, st := range res {
		out.Jobs[id] = wire.StatusResponse{Status: st}
	}
	return c.JSON(out)
}

func (s *Server) getJob(c *fiber.Ctx) error {
	j, err := s.svc.GetJob(ns(c), scope(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(j)
}

func (s *Server) retryJob(c *fiber.Ctx) error {
	if err := decodeOptional(c, &struct{}{}); err != nil {
		return err
	}
	out, err := s.svc.RetryJob(c.UserContext(), ns(c), scope(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (s *Server) cancelJob(c *fiber.Ctx) error {
	if err := decodeOptional(c, &struct{}{}); err != nil {
		return err
	}
	st, err := s.svc.CancelJob(c.UserContext(), ns(c), scope(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(wire.StatusResponse{Status: st})
}

func (s *Server) moveJob(c *fiber.Ctx) error {
	var r wire.MoveRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	out, err := s.svc.MoveJob(c.UserContext(), ns(c), scope(c), c.Params("id"), &r)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (s *Server) deleteJob(c *fiber.Ctx) error {
	if err := s.svc.DeleteJob(c.UserContext(), ns(c), scope(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) listDead(c *fiber.Ctx) error {
	q := service.DeadQuery{Queue: c.Query("queue"), Cursor: c.Query("cursor")}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return apierr.Field("limit", "limit must be a whole number")
		}
		if n == 0 {
			return apierr.Field("limit", "limit must be between 1 and %d", wire.MaxDeadLimit)
		}
		q.Limit = n
	}
	page, err := s.svc.ListDead(ns(c), scope(c), q)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (s *Server) getBatch(c *fiber.Ctx) error {
	b, err := s.svc.GetBatch(ns(c), scope(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(b)
}
