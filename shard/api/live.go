package api

import (
	"bufio"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func (s *Server) liveRoutes(api fiber.Router) {
	api.Get("/workers", s.listWorkers)
	api.Post("/workers/:id/drain", s.drainWorker)
	api.Get("/events", s.streamEvents)
}

func (s *Server) listWorkers(c *fiber.Ctx) error {
	if err := service.CheckNamespace(ns(c)); err != nil {
		return err
	}
	return c.JSON(wire.WorkerList{Workers: s.workers.List(ns(c), scope(c))})
}

// drainWorker asks a worker to stop taking jobs (live.Workers.Drain).
func (s *Server) drainWorker(c *fiber.Ctx) error {
	if err := service.CheckNamespace(ns(c)); err != nil {
		return err
	}
	id := c.Params("id")
	if id == "" || len(id) > wire.MaxWorkerID {
		return apierr.Field("id", "a worker id is 1 to %d bytes", wire.MaxWorkerID)
	}
	if !s.workers.Drain(ns(c), id, scope(c)) {
		return apierr.New(apierr.NotFound, "worker %s has not been seen (a drain lasts while this leader does)", id)
	}
	s.svc.WakeFetches(ns(c)) // a fetch it has parked answers now
	return c.JSON(wire.WorkerDrainResponse{WorkerID: id, Draining: true})
}

// streamEvents serves the namespace's lifecycle events as Server-Sent
// Events. Without Last-Event-ID the stream starts with the next event;
// with it, after that event.
func (s *Server) streamEvents(c *fiber.Ctx) error {
	n := ns(c)
	if err := service.CheckNamespace(n); err != nil {
		return err
	}
	var after uint64
	resume, note := false, ""
	if h := c.Get(wire.LastEventIDHeader); h != "" {
		// An id is "<shard>:<seq>" (a bare seq is taken as this shard's).
		// One of another shard is from before the namespace moved here:
		// its seq means nothing in this shard's log, so the stream resumes
		// at the oldest event kept here, saying events may be missed.
		shard, seq, scoped := strings.Cut(h, ":")
		if !scoped {
			shard, seq = s.cfg.ShardID, h
		}
		v, err := strconv.ParseUint(seq, 10, 64)
		if err != nil || shard == "" {
			return apierr.Field(wire.LastEventIDHeader, "Last-Event-ID must be an event id from this stream, not %q", h)
		}
		if shard != s.cfg.ShardID {
			v, note = 0, ": events were missed: the id is of another shard's stream (the namespace moved here); the stream resumes at the oldest event the log keeps\n\n"
		}
		after, resume = v, true
	}
	sub, err := s.events.Subscribe(n)
	if err != nil {
		return err
	}
	if !resume {
		after = s.events.Latest(n)
	}
	// A stream opened before the shard's log started (its Latest is 0)
	// missed nothing once the log starts: it reads from the log's start
	// without being told otherwise.
	fresh := !resume && after == 0
	sc := scope(c)
	sseHeaders(c)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.events.Unsubscribe(sub)
		s.writeEvents(w, sub, after, fresh, sc, note)
	})
	return nil
}

// writeEvents writes events after seq, of the queues in sc, until the
// client goes away (a write fails), the node stops or the namespace moved
// to another shard (its client reconnects, and is sent there).
func (s *Server) writeEvents(w *bufio.Writer, sub *live.Sub, after uint64, fresh bool, sc tenancy.QueueScope, note string) {
	_, _ = w.WriteString(": jobbie events\n\n" + note)
	if w.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.events.Heartbeat())
	defer tick.Stop()
	buf := make([]live.Event, 0, live.MaxEventsPerWrite)
	told := note != ""
	for {
		evs, missed, skipTo := s.events.Read(sub.NS(), after, live.MaxEventsPerWrite, buf[:0])
		if missed {
			if !told && !fresh { // the opening note may have said so already
				_, _ = w.WriteString(": events were missed: the stream resumes at the oldest event the log still keeps\n\n")
			}
			after = skipTo
		}
		told = false
		fresh = fresh && after == 0
		wrote := false
		for i := range evs {
			after = evs[i].Seq
			// The stream carries job events; other things' events are
			// for webhooks (docs/api/events.md).
			if evs[i].IsJob() && sc.Allows(evs[i].Queue) {
				writeEvent(w, s.cfg.ShardID, &evs[i])
				wrote = true
			}
		}
		if (missed || wrote) && w.Flush() != nil {
			return
		}
		if len(evs) == live.MaxEventsPerWrite {
			continue
		}
		if s.svc.Moving(sub.NS()) == wire.MovingMoved {
			_, _ = w.WriteString(": the namespace moved to another shard: reconnect\n\n")
			_ = w.Flush()
			return
		}
		select {
		case <-sub.Wake():
		case <-tick.C:
			_, _ = w.WriteString(": heartbeat\n\n")
			if w.Flush() != nil {
				return
			}
		case <-s.svc.Stopping():
			return
		}
	}
}

func writeEvent(w *bufio.Writer, shard string, ev *live.Event) {
	d := wire.Event{Type: ev.Type, JobID: ev.JobID, Queue: ev.Queue, State: ev.State.String(),
		At: time.Unix(0, ev.At).UTC(), Attempt: ev.Attempt, WorkerID: ev.WorkerID, DeadReason: ev.DeadReason()}
	if ev.From != 0 {
		d.From = ev.From.String()
	}
	raw, _ := json.Marshal(d) // plain strings, numbers and a time: cannot fail
	_, _ = w.WriteString("id: ")
	_, _ = w.WriteString(shard)
	_, _ = w.WriteString(":")
	_, _ = w.WriteString(strconv.FormatUint(ev.Seq, 10))
	_, _ = w.WriteString("\nevent: ")
	_, _ = w.WriteString(ev.Type)
	_, _ = w.WriteString("\ndata: ")
	_, _ = w.Write(raw)
	_, _ = w.WriteString("\n\n")
}
