package shard

import (
	"bufio"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/search"
)

// SearchJob is a job in a search answer: the job view without its
// timeline, plus its last error.
type SearchJob struct {
	*JobDetail
	LastError string `json:"last_error,omitempty"`
}

// SearchPage is the answer to POST /api/v1/jobs/search.
type SearchPage struct {
	Jobs       []SearchJob `json:"jobs"`
	Total      int64       `json:"total"`
	TotalExact bool        `json:"total_exact"`
	Cursor     *string     `json:"cursor"`
	HasMore    bool        `json:"has_more"`
	DurationMs float64     `json:"duration_ms"`
	Partial    bool        `json:"partial"`
}

func (s *Server) searchRoutes(api fiber.Router) {
	api.Post("/jobs/search", s.searchJobs)
	api.Post("/jobs/bulk", s.bulkJobs)
	api.Get("/bulk/:id", s.bulkStatus)
	api.Get("/bulk/:id/progress", s.bulkProgress)
	api.Delete("/bulk/:id", s.cancelBulk)
}

func (s *Server) searchJobs(c *fiber.Ctx) error {
	start := time.Now()
	r, err := search.ParseRequest(c.Body())
	if err != nil {
		return err
	}
	res, err := s.Search(c.UserContext(), ns(c), r)
	if err != nil {
		return err
	}
	out := SearchPage{Jobs: make([]SearchJob, len(res.Jobs)), Total: res.Total, TotalExact: res.TotalExact,
		HasMore: res.HasMore, Partial: res.Partial}
	for i, j := range res.Jobs {
		d := detailView(j)
		d.Timeline = nil
		out.Jobs[i] = SearchJob{JobDetail: d}
		if n := len(j.Errors); n > 0 {
			out.Jobs[i].LastError = j.Errors[n-1].Error
		}
	}
	if res.Cursor != "" {
		out.Cursor = &res.Cursor
	}
	out.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	return c.JSON(out)
}

func (s *Server) bulkJobs(c *fiber.Ctx) error {
	start := time.Now()
	var r BulkRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	res, op, err := s.Bulk(c.UserContext(), ns(c), &r)
	if err != nil {
		return err
	}
	if op != nil {
		return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"bulk_operation_id": op.ID, "status": op.Status,
			"estimated_total": op.Total, "progress_url": op.ProgressURL})
	}
	if res.Failures == nil {
		res.Failures = []BulkFailure{}
	}
	return c.JSON(fiber.Map{"affected": res.Affected, "skipped": res.Skipped, "errors": res.Errors,
		"failures": res.Failures, "duration_ms": float64(time.Since(start).Microseconds()) / 1000})
}

func (s *Server) bulkStatus(c *fiber.Ctx) error {
	op, err := s.BulkStatus(ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(op)
}

func (s *Server) cancelBulk(c *fiber.Ctx) error {
	op, err := s.CancelBulk(c.UserContext(), ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(op)
}

// bulkProgressEvery is how often the progress stream looks at the record.
const bulkProgressEvery = 200 * time.Millisecond

// bulkProgress streams an operation's status as Server-Sent Events: a
// progress event whenever it changed, and a done event when it finished.
func (s *Server) bulkProgress(c *fiber.Ctx) error {
	n, id := ns(c), c.Params("id")
	first, err := s.BulkStatus(n, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		tick := time.NewTicker(bulkProgressEvery)
		defer tick.Stop()
		op, last := first, []byte(nil)
		for {
			raw, _ := json.Marshal(op) // strings, numbers and times: cannot fail
			ev := "progress"
			if op.Status != bulkProcessing {
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
			case <-s.stop:
				return
			}
			if op, err = s.BulkStatus(n, id); err != nil {
				_, _ = w.WriteString("event: error\ndata: " + jsonString(apierr.From(err).Message) + "\n\n")
				_ = w.Flush()
				return
			}
		}
	})
	return nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
