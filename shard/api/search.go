package api

import (
	"bufio"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

func (s *Server) searchRoutes(api fiber.Router) {
	api.Post("/jobs/search", s.searchJobs)
	api.Post("/jobs/bulk", s.bulkJobs)
	api.Get("/bulk", s.listBulk)
	api.Get("/bulk/:id", s.bulkStatus)
	api.Get("/bulk/:id/progress", s.bulkProgress)
	api.Delete("/bulk/:id", s.cancelBulk)
}

// sinceMs is the time since start in milliseconds, as the answers say it.
func sinceMs(start time.Time) float64 { return float64(time.Since(start).Microseconds()) / 1000 }

func (s *Server) searchJobs(c *fiber.Ctx) error {
	start := time.Now()
	r, err := search.ParseRequest(c.Body())
	if err != nil {
		return err
	}
	page, err := s.svc.SearchPage(c.UserContext(), ns(c), scope(c), r)
	if err != nil {
		return err
	}
	page.DurationMs = sinceMs(start)
	return c.JSON(page)
}

func (s *Server) bulkJobs(c *fiber.Ctx) error {
	start := time.Now()
	var r wire.BulkRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	res, op, err := s.svc.Bulk(c.UserContext(), ns(c), scope(c), &r)
	if err != nil {
		return err
	}
	if op != nil {
		return c.Status(fiber.StatusAccepted).JSON(op)
	}
	res.DurationMs = sinceMs(start)
	return c.JSON(res)
}

// listBulk answers GET /api/v1/bulk?limit=&cursor=: the namespace's
// background operations, newest first.
func (s *Server) listBulk(c *fiber.Ctx) error {
	q := service.BulkQuery{Cursor: c.Query("cursor")}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return apierr.Field("limit", "limit must be a whole number between 1 and %d", wire.MaxBulkListLimit)
		}
		q.Limit = n
	}
	page, err := s.svc.ListBulk(ns(c), scope(c), q)
	return reply(c, page, err)
}

func (s *Server) bulkStatus(c *fiber.Ctx) error {
	op, err := s.svc.BulkStatus(ns(c), scope(c), c.Params("id"))
	return reply(c, op, err)
}

func (s *Server) cancelBulk(c *fiber.Ctx) error {
	op, err := s.svc.CancelBulk(c.UserContext(), ns(c), scope(c), c.Params("id"))
	return reply(c, op, err)
}

// bulkProgressEvery is how often the progress stream looks at the record.
const bulkProgressEvery = 200 * time.Millisecond

// bulkProgress streams an operation's status as Server-Sent Events: a
// progress event whenever it changed, and a done event when it finished.
func (s *Server) bulkProgress(c *fiber.Ctx) error {
	// The stream outlives the handler, and a param is a view of a buffer
	// the next request reuses: the id is copied.
	n, sc, id := ns(c), scope(c), strings.Clone(c.Params("id"))
	first, err := s.svc.BulkStatus(n, sc, id)
	if err != nil {
		return err
	}
	sseHeaders(c)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		tick := time.NewTicker(bulkProgressEvery)
		defer tick.Stop()
		op, last := first, []byte(nil)
		for {
			raw, _ := json.Marshal(op) // strings, numbers and times: cannot fail
			ev := "progress"
			if op.Status != wire.BulkProcessing {
				ev = "done"
			}
			if ev == "done" || string(raw) != string(last) {
				_, _ = w.WriteString("event: " + ev + "\ndata: ")
				_, _ = w.Write(raw)
				_, _ = w.WriteString("\n\n")
				if w.Flush() != nil || ev == "done" {
					return
				}
				last = raw
			}
			select {
			case <-tick.C:
			case <-s.svc.Stopping():
				return
			}
			if op, err = s.svc.BulkStatus(n, sc, id); err != nil {
				_, _ = w.WriteString("event: error\ndata: " + jsonString(apierr.From(err).Message) + "\n\n")
				_ = w.Flush()
				return
			}
		}
	})
	return nil
}

func sseHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
