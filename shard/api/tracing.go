package api

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/tracing"
	"github.com/jobbie/jobbie/wire"
)

// systemSpan records the node's own span of an /api/v1 request (the
// operator's trace: internal/tracing's system context), a child of the
// gateway's span when it sent one. Tracing off, it is a nil check.
func (s *Server) systemSpan(c *fiber.Ctx) error {
	if s.tr == nil {
		return c.Next()
	}
	sp := s.tr.System("shard "+c.Method(), trace.SpanKindServer, time.Now(), c.Get(wire.SystemTraceParentHeader),
		c.Get(wire.TraceParentHeader), c.Get(wire.TraceStateHeader), ns(c))
	err := c.Next()
	status, errType := c.Response().StatusCode(), ""
	if err != nil {
		code := apierr.From(err).Code
		status, errType = apierr.Status(code), string(code)
	}
	sp.End("shard "+c.Method()+" "+c.Route().Path, status, errType)
	return err
}

// traceStart is when a traced operation began; the zero time, without a
// clock read, when tracing is off.
func (s *Server) traceStart() time.Time {
	if s.tr == nil {
		return time.Time{}
	}
	return time.Now()
}

// errType is a refusal's error code for a span's error.type.
func errType(err error) string {
	if err == nil {
		return ""
	}
	return string(apierr.From(err).Code)
}

// traceSend records an enqueue's send span: one job (r), or a batch's.
func (s *Server) traceSend(c *fiber.Ctx, start time.Time, batch bool, reqs []wire.EnqueueRequest, ids []string, err error) {
	msgs := make([]tracing.Message, len(reqs))
	for i := range reqs {
		msgs[i] = tracing.Message{Queue: reqs[i].Queue, Parent: reqs[i].TraceParent, State: reqs[i].TraceState}
		if i < len(ids) {
			msgs[i].ID = ids[i]
		}
	}
	parent, state := c.Get(wire.TraceParentHeader), c.Get(wire.TraceStateHeader)
	if !batch && len(reqs) == 1 {
		parent, state = reqs[0].TraceParent, reqs[0].TraceState // the headers', or the job's own
	}
	s.tr.Send(ns(c), parent, state, batch, msgs, start, errType(err))
}

// traceReceive records a fetch's receive span for the jobs it leased.
func (s *Server) traceReceive(c *fiber.Ctx, start time.Time, jobs []wire.FetchedJob) {
	msgs := make([]tracing.Message, len(jobs))
	for i := range jobs {
		msgs[i] = tracing.Message{ID: jobs[i].JobID, Queue: jobs[i].Queue, Parent: jobs[i].TraceParent, State: jobs[i].TraceState}
	}
	s.tr.Receive(ns(c), c.Get(wire.TraceParentHeader), c.Get(wire.TraceStateHeader), msgs, start)
}

// jobMessage is job id as a settle span names it, read before it settles.
func (s *Server) jobMessage(c *fiber.Ctx, id string) tracing.Message {
	m := tracing.Message{ID: strings.Clone(id)} // the span outlives the request's buffer
	m.Queue, m.Parent, m.State = s.svc.JobTrace(ns(c), id)
	return m
}
