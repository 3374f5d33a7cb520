package shard

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
)

// QueueView is the JSON shape of a queue.
type QueueView struct {
	Name             string         `json:"name"`
	Counts           QueueCounts    `json:"counts"`
	Throughput       float64        `json:"throughput"` // completed per minute, last 5 minutes
	OldestPendingAge float64        `json:"oldest_pending_age"`
	Paused           bool           `json:"paused"`
	Draining         bool           `json:"draining"`
	Drained          bool           `json:"drained"`
	Concurrency      *int64         `json:"concurrency"`
	Throttle         *ThrottleView  `json:"throttle"`
	Defaults         *QueueDefaults `json:"defaults"`
}

// QueueCounts are a queue's jobs per state.
type QueueCounts struct {
	Pending   int64 `json:"pending"`
	Scheduled int64 `json:"scheduled"`
	Active    int64 `json:"active"`
	Retrying  int64 `json:"retrying"`
	Completed int64 `json:"completed"`
	Dead      int64 `json:"dead"`
	Cancelled int64 `json:"cancelled"`
	Held      int64 `json:"held"`
}

// ThrottleView is a queue's rate limit.
type ThrottleView struct {
	Rate   int64  `json:"rate"`
	Period string `json:"period"`
}

// QueueDefaults are the defaults of a queue's jobs, as sent and shown;
// an absent or null field has no queue default.
type QueueDefaults struct {
	MaxRetries     *int            `json:"max_retries"`
	RetryBackoff   *string         `json:"retry_backoff"`
	RetryBaseDelay json.RawMessage `json:"retry_base_delay"`
	RetryMaxDelay  json.RawMessage `json:"retry_max_delay"`
	LeaseDuration  json.RawMessage `json:"lease_duration"`
	Retention      json.RawMessage `json:"retention"`
}

func (e *Engine) queueView(r pebble.Reader, ns string, q *queueRecord, now int64) *QueueView {
	v := &QueueView{
		Name: q.Name, Throughput: q.throughput(now), Paused: q.Paused, Draining: q.Draining,
		Counts: QueueCounts{Pending: q.count(job.Pending), Scheduled: q.count(job.Scheduled), Active: q.count(job.Active),
			Retrying: q.count(job.Retrying), Completed: q.count(job.Completed), Dead: q.count(job.Dead), Cancelled: q.count(job.Cancelled),
			Held: q.count(job.Held)},
	}
	v.Drained = q.Draining && v.Counts.Active == 0
	if v.Counts.Pending > 0 {
		if at := oldestPending(r, ns, q.Name); at > 0 && now > at {
			v.OldestPendingAge = time.Duration(now - at).Seconds()
		}
	}
	if q.MaxActive > 0 {
		m := q.MaxActive
		v.Concurrency = &m
	}
	if t := q.Throttle; t != nil {
		v.Throttle = &ThrottleView{Rate: t.Rate, Period: fmtDuration(time.Duration(t.Period))}
	}
	if d := q.Defaults; d != nil {
		v.Defaults = &QueueDefaults{MaxRetries: d.MaxRetries, RetryBaseDelay: durJSON(d.BaseDelay),
			RetryMaxDelay: durJSON(d.MaxDelay), LeaseDuration: durJSON(d.LeaseNs), Retention: durJSON(d.Retention)}
		if d.Backoff != "" {
			b := d.Backoff
			v.Defaults.RetryBackoff = &b
		}
	}
	return v
}

func durJSON(ns int64) json.RawMessage {
	if ns == 0 {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(fmtDuration(time.Duration(ns)))
	return b
}

// toDefaults validates the defaults a caller sent.
func (d *QueueDefaults) toDefaults() (queueDefaults, error) {
	var out queueDefaults
	if d.MaxRetries != nil {
		if *d.MaxRetries < 0 || *d.MaxRetries > maxMaxRetries {
			return out, apierr.Field("max_retries", "max_retries must be between 0 and %d", maxMaxRetries)
		}
		n := *d.MaxRetries
		out.MaxRetries = &n
	}
	if d.RetryBackoff != nil {
		if err := job.ValidBackoff(*d.RetryBackoff); err != nil {
			return out, apierr.Field("retry_backoff", "%v", err)
		}
		out.Backoff = *d.RetryBackoff
	}
	for _, f := range []struct {
		name     string
		raw      json.RawMessage
		dst      *int64
		min, max time.Duration
	}{
		{"retry_base_delay", d.RetryBaseDelay, &out.BaseDelay, 1, maxDelay},
		{"retry_max_delay", d.RetryMaxDelay, &out.MaxDelay, 1, maxDelay},
		{"lease_duration", d.LeaseDuration, &out.LeaseNs, MinLease, MaxLease},
		{"retention", d.Retention, &out.Retention, time.Minute, maxRetention},
	} {
		v, ok, err := parseSpan(f.name, f.raw, f.min, f.max)
		if err != nil {
			return out, err
		}
		if ok {
			*f.dst = int64(v)
		}
	}
	if out.BaseDelay > 0 && out.MaxDelay > 0 && out.MaxDelay < out.BaseDelay {
		return out, apierr.Field("retry_max_delay", "retry_max_delay must not be less than retry_base_delay")
	}
	return out, nil
}

// parseSpan parses a duration ("5s" or seconds) between min and max.
func parseSpan(field string, raw json.RawMessage, min, max time.Duration) (time.Duration, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, false, nil
	}
	var d time.Duration
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		v, perr := time.ParseDuration(s)
		if perr != nil {
			return 0, false, apierr.Field(field, "%s must be a duration like \"30s\" or a number of seconds", field)
		}
		d = v
	} else {
		var secs float64
		if err := json.Unmarshal(raw, &secs); err != nil {
			return 0, false, apierr.Field(field, "%s must be a duration like \"30s\" or a number of seconds", field)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < min || d > max {
		return 0, false, apierr.Field(field, "%s must be between %s and %s", field, fmtDuration(min), fmtDuration(max))
	}
	return d, true, nil
}

// queueRoutes mounts the queue endpoints on the authenticated API.
func (s *Server) queueRoutes(api fiber.Router) {
	api.Get("/queues", s.listQueues)
	api.Get("/queues/:name", s.getQueue)
	api.Delete("/queues/:name", s.deleteQueue)
	api.Post("/queues/:name/pause", s.pauseQueue)
	api.Post("/queues/:name/resume", s.resumeQueue)
	api.Post("/queues/:name/drain", s.drainQueue)
	api.Post("/queues/:name/clear", s.clearQueue)
	api.Post("/queues/:name/concurrency", s.setConcurrency)
	api.Delete("/queues/:name/concurrency", s.removeConcurrency)
	api.Post("/queues/:name/throttle", s.setThrottle)
	api.Delete("/queues/:name/throttle", s.removeThrottle)
	api.Post("/queues/:name/defaults", s.setQueueDefaults)
}

func (s *Server) listQueues(c *fiber.Ctx) error {
	list, err := s.ListQueues(ns(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"queues": list})
}

func (s *Server) getQueue(c *fiber.Ctx) error {
	return replyQueue(c)(s.GetQueue(ns(c), c.Params("name")))
}

func replyQueue(c *fiber.Ctx) func(*QueueView, error) error {
	return func(v *QueueView, err error) error {
		if err != nil {
			return err
		}
		return c.JSON(v)
	}
}

func (s *Server) pauseQueue(c *fiber.Ctx) error {
	return replyQueue(c)(s.PauseQueue(c.UserContext(), ns(c), c.Params("name")))
}

func (s *Server) resumeQueue(c *fiber.Ctx) error {
	return replyQueue(c)(s.ResumeQueue(c.UserContext(), ns(c), c.Params("name")))
}

func (s *Server) drainQueue(c *fiber.Ctx) error {
	q := c.Params("name")
	active, err := s.DrainQueue(c.UserContext(), ns(c), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"queue": q, "paused": true, "draining": true, "active": active, "drained": active == 0})
}

func (s *Server) clearQueue(c *fiber.Ctx) error {
	q := c.Params("name")
	n, err := s.ClearQueue(c.UserContext(), ns(c), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"queue": q, "cleared": n})
}

func (s *Server) deleteQueue(c *fiber.Ctx) error {
	q := c.Params("name")
	if err := queueOK(ns(c), q); err != nil {
		return err
	}
	if c.Query("confirm") != "true" {
		return apierr.Field("confirm", "deleting queue %q removes all its jobs: add ?confirm=true", q)
	}
	n, err := s.DeleteQueue(c.UserContext(), ns(c), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"queue": q, "deleted": true, "jobs_deleted": n})
}

func (s *Server) setConcurrency(c *fiber.Ctx) error {
	var r struct {
		Max json.RawMessage `json:"max"`
	}
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	var max int64
	if raw := bytes.TrimSpace(r.Max); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &max); err != nil || max < 1 {
			return apierr.Field("max", "max must be an integer of at least 1 (1 = one job at a time), or null to remove the limit")
		}
	} else if len(raw) == 0 {
		return apierr.Field("max", "max is required: an integer of at least 1, or null to remove the limit")
	}
	return replyQueue(c)(s.SetConcurrency(c.UserContext(), ns(c), c.Params("name"), max))
}

func (s *Server) removeConcurrency(c *fiber.Ctx) error {
	return replyQueue(c)(s.SetConcurrency(c.UserContext(), ns(c), c.Params("name"), 0))
}

func (s *Server) setThrottle(c *fiber.Ctx) error {
	var r struct {
		Rate   *int64          `json:"rate"`
		Period json.RawMessage `json:"period"`
	}
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	if r.Rate == nil || *r.Rate < 1 || *r.Rate > maxThrottleRate {
		return apierr.Field("rate", "rate must be an integer between 1 and %d", maxThrottleRate)
	}
	period, ok, err := parseSpan("period", r.Period, minThrottlePer, maxThrottlePer)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.Field("period", "period is required: a duration like \"1m\" between 1s and 7 days")
	}
	return replyQueue(c)(s.SetThrottle(c.UserContext(), ns(c), c.Params("name"), *r.Rate, period))
}

func (s *Server) removeThrottle(c *fiber.Ctx) error {
	return replyQueue(c)(s.SetThrottle(c.UserContext(), ns(c), c.Params("name"), 0, 0))
}

func (s *Server) setQueueDefaults(c *fiber.Ctx) error {
	var r QueueDefaults
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	d, err := r.toDefaults()
	if err != nil {
		return err
	}
	return replyQueue(c)(s.SetQueueDefaults(c.UserContext(), ns(c), c.Params("name"), d))
}
