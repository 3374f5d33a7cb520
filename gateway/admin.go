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
// want. Control's 400/404/409 are the tenant's to see and come back as
// the same API error; any other outcome means control is unwell.
func (s *Server) controlCall(r *call, method, path string, in any, want int) (controlReply, error) {
	rep, err := s.control.do(s.ctx, method, path, r.requestID, in)
	switch {
	case err != nil:
		s.log.Warn("gateway: control call failed", "method", method, "path", path, "request_id", r.requestID, "err", err)
		return rep, apierr.Retry(apierr.Unavailable, 1, "the control plane is unavailable; retry shortly")
	case rep.status == want:
		return rep, nil
	case passesThrough(rep.status):
		return rep, controlError(rep)
	}
	s.log.Error("gateway: unexpected control answer", "method", method, "path", path, "status", rep.status,
		"request_id", r.requestID, "body", string(rep.body))
	return rep, apierr.Retry(apierr.Unavailable, 1, "the control plane could not serve this request; retry shortly")
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
