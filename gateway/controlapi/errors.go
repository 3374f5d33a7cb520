package controlapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/wire"
)

// Error is an answer of control other than the one a call expects.
type Error struct {
	// Method and Path are what was asked, for the logs; empty from an
	// implementation that asks no one.
	Method, Path string
	Status       int
	// RetryAfter is control's Retry-After, if it sent one.
	RetryAfter string
	// Body is control's answer, an error body (wire.ErrorBody) as a rule.
	Body []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("gateway: control %s answered %d: %.200s", e.Path, e.Status, e.Body)
}

// Refusal is e as control would answer it: its status and error body.
func Refusal(e *apierr.Error) *Error {
	raw, _ := json.Marshal(wire.ErrorBody{Error: e.Wire()})
	return &Error{Status: apierr.Status(e.Code), Body: raw}
}

// NotFound reports whether err is control's 404.
func NotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// ErrUndecodable is wrapped by the error of a call whose answer the
// gateway could not read.
var ErrUndecodable = controlclient.ErrDecode

// ForTenant is what the tenant is told when a call to control made for
// its request requestID failed with err; log is told the rest. Control's
// 400, 404, 409, 422 and 429 are the tenant's to see (a 422 is an
// Idempotency-Key sent with another request, a 429 a plan's quota, such
// as max_keys) and come back as the same API error. A 503 is
// control saying it cannot serve now (no leader, an election, a store
// away): it passes through with control's code and Retry-After. Anything
// else means control is unwell, or away.
func ForTenant(log *slog.Logger, requestID string, err error) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e.forTenant(log, requestID)
	case errors.Is(err, ErrUndecodable):
		log.Error("gateway: undecodable control answer", "request_id", requestID, "err", err)
		return apierr.New(apierr.Internal, "the control plane gave an answer the gateway cannot read")
	}
	log.Warn("gateway: control call failed", "request_id", requestID, "err", err)
	return apierr.Retry(apierr.Unavailable, 1, "the control plane is unavailable; retry shortly")
}

func (e *Error) forTenant(log *slog.Logger, requestID string) error {
	switch {
	case passesThrough(e.Status):
		return e.tenantError()
	case e.Status == http.StatusServiceUnavailable:
		log.Warn("gateway: control unavailable", "method", e.Method, "path", e.Path, "request_id", requestID,
			"retry_after", e.RetryAfter, "body", string(e.Body))
		out := apierr.Retry(apierr.Unavailable, retryAfterSeconds(e.RetryAfter), "the control plane is unavailable; retry shortly")
		var body wire.ErrorBody
		if json.Unmarshal(e.Body, &body) == nil && body.Error != nil && apierr.Status(body.Error.Code) == e.Status {
			out.Code, out.Message = body.Error.Code, body.Error.Message
		}
		return out
	}
	log.Error("gateway: unexpected control answer", "method", e.Method, "path", e.Path, "status", e.Status,
		"request_id", requestID, "body", string(e.Body))
	return apierr.Retry(apierr.Unavailable, 1, "the control plane could not serve this request; retry shortly")
}

// passesThrough reports whether a control status is the tenant's to see.
func passesThrough(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusConflict ||
		status == http.StatusUnprocessableEntity || status == http.StatusTooManyRequests
}

// tenantError rebuilds control's error so it reaches the client with the
// same code, message and field.
func (e *Error) tenantError() error {
	var body wire.ErrorBody
	if json.Unmarshal(e.Body, &body) == nil && body.Error != nil && apierr.Status(body.Error.Code) == e.Status {
		out := apierr.FromWire(body.Error)
		out.RequestID = ""
		return out
	}
	code := map[int]apierr.Code{
		http.StatusBadRequest: apierr.BadRequest,
		http.StatusNotFound:   apierr.NotFound,
		http.StatusConflict:   apierr.Conflict,
	}[e.Status]
	return apierr.New(code, "%s", http.StatusText(e.Status))
}

// retryAfterSeconds reads a Retry-After in seconds (1 when absent or not
// a count of seconds).
func retryAfterSeconds(v string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return n
	}
	return 1
}

// NotServedError is the answer of an implementation that does not serve
// a call (a self-hosted node's local API has no tenant administration).
// The gateway takes it as control being away.
type NotServedError struct {
	What string // what is not served
	By   string // who does not serve it
}

func (e *NotServedError) Error() string { return "gateway: " + e.What + ": not served by " + e.By }
