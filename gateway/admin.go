package gateway

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Tenant administration is served through control's internal API. The
// gateway decides whether the caller may (RBAC, delegation, namespace
// subset); control validates shapes and existence.

// tenantPath is a path under control's internal tenant API.
func tenantPath(tenantID, rest string) string {
	return "/internal/v1/tenants/" + url.PathEscape(tenantID) + rest
}

// decodeBody decodes a JSON request body strictly (apierr.DecodeJSON):
// unknown fields are refused, as everywhere in the API.
func decodeBody(c *fiber.Ctx, out any) error {
	return apierr.DecodeJSON(c.Request().Body(), out, false)
}

// controlJSON calls control and decodes an answer of status want into out
// (when out is not nil).
func (s *Server) controlJSON(r *call, method, path string, in any, want int, out any) error {
	rep, err := s.controlCall(r, method, path, in, want)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(rep.body, out); err != nil {
		s.log.Error("gateway: undecodable control answer", "path", path, "request_id", r.requestID, "err", err)
		return apierr.New(apierr.Internal, "the control plane gave an answer the gateway cannot read")
	}
	return nil
}

// controlCall calls control and returns its answer when the status is
// want; controlAnswer judges any other.
func (s *Server) controlCall(r *call, method, path string, in any, want int) (controlReply, error) {
	rep, err := s.control.do(s.ctx, method, path, r.requestID, in)
	switch {
	case err != nil:
		s.log.Warn("gateway: control call failed", "method", method, "path", path, "request_id", r.requestID, "err", err)
		return rep, apierr.Retry(apierr.Unavailable, 1, "the control plane is unavailable; retry shortly")
	case rep.status == want:
		return rep, nil
	}
	return rep, s.controlAnswer(r, method, path, rep)
}

// controlAnswer is the error for a control answer other than the one
// wanted. Control's 400/404/409/429 are the tenant's to see and come back
// as the same API error. A 503 is control saying it cannot serve now (no
// leader, an election, a store away): it passes through with control's
// code and Retry-After. Anything else means control is unwell.
func (s *Server) controlAnswer(r *call, method, path string, rep controlReply) error {
	switch {
	case passesThrough(rep.status):
		return controlError(rep)
	case rep.status == http.StatusServiceUnavailable:
		s.log.Warn("gateway: control unavailable", "method", method, "path", path, "request_id", r.requestID,
			"retry_after", rep.retryAfter, "body", string(rep.body))
		e := apierr.Retry(apierr.Unavailable, retryAfterSeconds(rep.retryAfter), "the control plane is unavailable; retry shortly")
		var body wire.ErrorBody
		if json.Unmarshal(rep.body, &body) == nil && body.Error != nil && apierr.Status(body.Error.Code) == rep.status {
			e.Code, e.Message = body.Error.Code, body.Error.Message
		}
		return e
	}
	s.log.Error("gateway: unexpected control answer", "method", method, "path", path, "status", rep.status,
		"request_id", r.requestID, "body", string(rep.body))
	return apierr.Retry(apierr.Unavailable, 1, "the control plane could not serve this request; retry shortly")
}

// controlError rebuilds control's error so it reaches the client with the
// same code, message and field.
func controlError(rep controlReply) error {
	var body wire.ErrorBody
	if json.Unmarshal(rep.body, &body) == nil && body.Error != nil && apierr.Status(body.Error.Code) == rep.status {
		e := apierr.FromWire(body.Error)
		e.RequestID = ""
		return e
	}
	code := map[int]apierr.Code{
		http.StatusBadRequest: apierr.BadRequest,
		http.StatusNotFound:   apierr.NotFound,
		http.StatusConflict:   apierr.Conflict,
	}[rep.status]
	return apierr.New(code, "%s", http.StatusText(rep.status))
}
