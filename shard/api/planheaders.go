package api

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// What a tenant's plan tells a shard, on the gateway's requests: the fair
// weight, the event log retention, max_pending_jobs, max_payload_bytes and the month's executions
// left under a hard cap.

// Fair weights: the gateway sends each request's tenant plan weight
// (wire.FairWeightHeader); the node remembers the last one seen per
// namespace, and the group commit admits a namespace of weight w w times
// the bytes of one of weight 1 (replica.Config.FairWeight).
const (
	MinFairWeight = 1
	MaxFairWeight = 1000
	// maxWeighted bounds the namespaces remembered. A full table starts
	// over: a namespace forgotten weighs 1 until its next request.
	maxWeighted = 16384
)

// Weights is the namespace → fair weight table. Safe for concurrent use;
// Of is quick (a read lock), as replica.Config.FairWeight must be.
type Weights struct {
	mu sync.RWMutex
	m  map[string]int
}

// NewWeights returns an empty table: every namespace weighs 1.
func NewWeights() *Weights { return &Weights{m: map[string]int{}} }

// Of is ns's weight: the last one its requests carried, else 1.
func (w *Weights) Of(ns string) int {
	if w == nil {
		return 1
	}
	w.mu.RLock()
	v, ok := w.m[ns]
	w.mu.RUnlock()
	if !ok {
		return 1
	}
	return v
}

// set records ns's weight; 1 is the default and is not kept.
func (w *Weights) set(ns string, v int) {
	w.mu.RLock()
	cur, ok := w.m[ns]
	w.mu.RUnlock()
	if (ok && cur == v) || (!ok && v == 1) {
		return
	}
	w.mu.Lock()
	if v == 1 {
		delete(w.m, ns)
	} else {
		if _, ok := w.m[ns]; !ok && len(w.m) >= maxWeighted {
			clear(w.m)
		}
		w.m[ns] = v
	}
	w.mu.Unlock()
}

// parseWeight reads a FairWeightHeader value; ok is false when it is
// absent, not an integer or out of range (the request keeps what was
// known of its namespace).
func parseWeight(h []byte) (int, bool) {
	if len(h) == 0 || len(h) > 4 {
		return 0, false
	}
	v, err := strconv.Atoi(string(h))
	if err != nil || v < MinFairWeight || v > MaxFairWeight {
		return 0, false
	}
	return v, true
}

// fairKey tags a request's proposals with its namespace, so the group
// commit admits namespaces in turn (replica.WithFairKey): one flooding
// namespace cannot starve the others. It records the namespace's weight
// when the request carries one, and its event log retention
// (service.WantEventRetention). It runs where the handler runs, on the
// leader or after forwarding.
func (s *Server) fairKey(c *fiber.Ctx) error {
	n := ns(c)
	if v, ok := parseWeight(c.Request().Header.Peek(wire.FairWeightHeader)); ok && n != "" && s.weights != nil {
		s.weights.set(n, v)
	}
	if h := c.Request().Header.Peek(wire.EventRetentionHeader); len(h) > 0 && n != "" && s.svc != nil {
		if err := s.wantRetention(n, h); err != nil {
			return err
		}
	}
	c.SetUserContext(replica.WithFairKey(c.UserContext(), n))
	return c.Next()
}

// wantRetention reads a wire.EventRetentionHeader value,
// "<hours>,<events>", into what ns's plan keeps; a bad one (not two
// integers, or out of the plans' bounds) is a 400 naming the header.
func (s *Server) wantRetention(ns string, h []byte) error {
	a, b, ok := bytes.Cut(h, []byte{','})
	hours, err1 := strconv.ParseInt(string(a), 10, 64)
	events, err2 := strconv.ParseInt(string(b), 10, 64)
	if !ok || err1 != nil || err2 != nil || s.svc.WantEventRetention(ns, hours, events) != nil {
		return apierr.New(apierr.BadRequest, "header %s must be <event_retention_hours>,<event_retention_events> within the plans' bounds; got %q",
			wire.EventRetentionHeader, h)
	}
	return nil
}

// limits reads the tenant plan's limits the gateway sends
// (wire.MaxPendingJobsHeader, wire.MaxPayloadBytesHeader,
// wire.ExecutionsLeftHeader; each absent: no limit). Only gateways and a
// shard's own members reach /api/v1, so the headers are the gateway's. A
// handler whose request stores or leases anything reads them here, so
// the service holds every plan limit in one value (service.Limits).
func limits(c *fiber.Ctx) (service.Limits, error) {
	var (
		lim service.Limits
		err error
	)
	if lim.MaxPendingJobs, err = positiveHeader(c, wire.MaxPendingJobsHeader); err != nil {
		return lim, err
	}
	if lim.MaxPayloadBytes, err = positiveHeader(c, wire.MaxPayloadBytesHeader); err != nil {
		return lim, err
	}
	if lim.ExecutionsLeft, err = positiveHeader(c, wire.ExecutionsLeftHeader); err != nil {
		return lim, err
	}
	return lim, nil
}

// positiveHeader reads header name as a positive integer; 0 when absent.
func positiveHeader(c *fiber.Ctx, name string) (int64, error) {
	h := c.Request().Header.Peek(name)
	if len(h) == 0 {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(h), 10, 64)
	if err != nil || v < 1 {
		return 0, apierr.New(apierr.BadRequest, "header %s must be a positive integer; got %q", name, h)
	}
	return v, nil
}
