package gateway

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// logRequest writes the request line of an API request: at debug, or at
// warn for a 5xx answer, with its request id, the tenant and namespace
// once admitted, and the trace id of the traceparent it came with. It
// never writes the key, a header's value or a body. A level that is off
// costs one Enabled call.
func (s *Server) logRequest(c *fiber.Ctx, rt route, r *admitted.Request, status int, took time.Duration) {
	level := slog.LevelDebug
	if status >= fiber.StatusInternalServerError {
		level = slog.LevelWarn
	}
	ctx := context.Background()
	if !s.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs, slog.String("method", rt.method), slog.String("route", rt.path), slog.Int("status", status),
		slog.Duration("took", took), slog.String("request_id", apierr.RequestIDOf(c)))
	if r.Key != nil {
		// Copies: the request's strings may alias request memory.
		attrs = append(attrs, slog.String("tenant", r.Key.TenantID), slog.String("key_id", r.Key.KeyID()), slog.String("namespace", string([]byte(r.NS))))
	}
	if tp := c.Get(wire.TraceParentHeader); wire.CheckTraceParent(tp) == nil {
		attrs = append(attrs, slog.String("trace_id", tp[3:35]))
	}
	s.log.LogAttrs(ctx, level, "gateway: request", attrs...)
}
