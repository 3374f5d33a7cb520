package shard

import (
	"bufio"
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// LastEventIDHeader names the last event a reconnecting stream has seen.
const LastEventIDHeader = "Last-Event-ID"

func (s *Server) liveRoutes(api fiber.Router) {
	api.Get("/workers", s.listWorkers)
	api.Get("/events", s.streamEvents)
}

func (s *Server) listWorkers(c *fiber.Ctx) error {
	if err := namespaceOK(ns(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"workers": s.workers.list(ns(c))})
}

// eventData is an event's data line.
type eventData struct {
	Type     string    `json:"type"`
	JobID    string    `json:"job_id"`
	Queue    string    `json:"queue"`
	State    string    `json:"state"`
	From     string    `json:"from,omitempty"`
	At       time.Time `json:"at"`
	Attempt  int       `json:"attempt"`
	WorkerID string    `json:"worker_id,omitempty"`
}

// streamEvents serves the namespace's lifecycle events as Server-Sent
// Events. Without Last-Event-ID the stream starts with the next event;
// with it, after that event.
func (s *Server) streamEvents(c *fiber.Ctx) error {
	n := ns(c)
	if err := namespaceOK(n); err != nil {
		return err
	}
	var after uint64
	resume := false
	if h := c.Get(LastEventIDHeader); h != "" {
		v, err := strconv.ParseUint(h, 10, 64)
		if err != nil {
			return apierr.Field(LastEventIDHeader, "Last-Event-ID must be an event id from this stream, not %q", h)
		}
		after, resume = v, true
	}
	sub, err := s.events.subscribe(n)
	if err != nil {
		return err
	}
	if !resume {
		after = s.events.latest(n)
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.events.unsubscribe(sub)
		s.writeEvents(w, sub, after)
	})
	return nil
}

// writeEvents writes events after seq until the client goes away (a write
// fails) or the node stops.
func (s *Server) writeEvents(w *bufio.Writer, sub *eventSub, after uint64) {
	_, _ = w.WriteString(": jobbie events\n\n")
	if w.Flush() != nil {
		return
	}
	tick := time.NewTicker(time.Duration(s.events.heartbeat.Load()))
	defer tick.Stop()
	buf := make([]Event, 0, maxEventsPerWrite)
	for {
		evs, missed, skipTo := s.events.read(sub.ns, after, maxEventsPerWrite, buf[:0])
		if missed {
			_, _ = w.WriteString(": events were missed: the stream resumes at the oldest event this node still keeps\n\n")
			after = skipTo
		}
		for i := range evs {
			writeEvent(w, &evs[i])
			after = evs[i].Seq
		}
		if (missed || len(evs) > 0) && w.Flush() != nil {
			return
		}
		if len(evs) == maxEventsPerWrite {
			continue
		}
		select {
		case <-sub.wake:
		case <-tick.C:
			_, _ = w.WriteString(": heartbeat\n\n")
			if w.Flush() != nil {
				return
			}
		case <-s.stop:
			return
		}
	}
}

func writeEvent(w *bufio.Writer, ev *Event) {
	d := eventData{Type: ev.Type, JobID: ev.JobID, Queue: ev.Queue, State: ev.State.String(),
		At: time.Unix(0, ev.At).UTC(), Attempt: ev.Attempt, WorkerID: ev.WorkerID}
	if ev.From != 0 {
		d.From = ev.From.String()
	}
	raw, _ := json.Marshal(d) // plain strings, numbers and a time: cannot fail
	_, _ = w.WriteString("id: ")
	_, _ = w.WriteString(strconv.FormatUint(ev.Seq, 10))
	_, _ = w.WriteString("\nevent: ")
	_, _ = w.WriteString(ev.Type)
	_, _ = w.WriteString("\ndata: ")
	_, _ = w.Write(raw)
	_, _ = w.WriteString("\n\n")
}
