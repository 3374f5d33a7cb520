package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Error codes the server answers with (Error.Code). They are stable. They
// stay untyped strings, as Error.Code is, so callers comparing codes with
// strings keep compiling.
const (
	CodeBadRequest      = string(wire.CodeBadRequest)
	CodeInvalidJSON     = string(wire.CodeInvalidJSON)
	CodeUnauthenticated = string(wire.CodeUnauthenticated)
	CodeForbidden       = string(wire.CodeForbidden)
	CodeNotFound        = string(wire.CodeNotFound)
	CodeConflict        = string(wire.CodeConflict)
	CodeLeaseMismatch   = string(wire.CodeLeaseMismatch)
	CodeTooLarge        = string(wire.CodeTooLarge)
	CodeRateLimited     = string(wire.CodeRateLimited)
	CodeNoLeader        = string(wire.CodeNoLeader)
	CodeUnavailable     = string(wire.CodeUnavailable)
	CodeInternal        = string(wire.CodeInternal)
	// CodeShardAnswerTooLarge: the answer asked for is larger than the
	// gateway passes on; ask for fewer jobs at once (never retried).
	CodeShardAnswerTooLarge = string(wire.CodeShardAnswerTooLarge)
	// CodeSelfHostedBudget: the tenant's own nodes hold their share of
	// the gateway; retried after Retry-After.
	CodeSelfHostedBudget = string(wire.CodeSelfHostedBudget)
	// CodeIdempotencyKeyReused: a key given with WithIdempotencyKey was
	// used for another request within 24 h (422; never retried).
	CodeIdempotencyKeyReused = string(wire.CodeIdempotencyKeyReused)
)

// Error is a non-2xx answer of the API.
type Error struct {
	Status     int           // HTTP status
	Code       string        // stable error code, one of the Code constants
	Message    string        // human-readable explanation
	Field      string        // the offending input field of a 400, if any
	RequestID  string        // the request id, for support
	RetryAfter time.Duration // when to retry a 429 or 503; zero if not given
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jobbie: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Field != "" {
		fmt.Fprintf(&b, " (field %s)", e.Field)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// Retryable reports whether the same request may succeed later: rate
// limited, no leader yet, or a dependency unavailable; not an answer too
// large to pass on, which the same request gets again.
func (e *Error) Retryable() bool {
	if e.Code == CodeShardAnswerTooLarge {
		return false
	}
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// AsError returns err as an *Error if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrorCode returns the API error code of err, or "" if err is not an *Error.
func ErrorCode(err error) string {
	if e, ok := AsError(err); ok {
		return e.Code
	}
	return ""
}

func hasStatus(err error, status int) bool {
	e, ok := AsError(err)
	return ok && e.Status == status
}

// IsBadRequest reports whether err is a 400 (invalid input).
func IsBadRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }

// IsUnauthenticated reports whether err is a 401 (missing, invalid or revoked key).
func IsUnauthenticated(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports whether err is a 403 (the key may not do this).
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is a 409, lease mismatches included.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsLeaseMismatch reports whether err says the job is no longer active
// under this worker's lease (it expired, or the job was cancelled).
func IsLeaseMismatch(err error) bool { return ErrorCode(err) == CodeLeaseMismatch }

// IsTooLarge reports whether err is a 413.
func IsTooLarge(err error) bool { return hasStatus(err, http.StatusRequestEntityTooLarge) }

// IsRateLimited reports whether err is a 429.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

// IsUnavailable reports whether err is a 503 (no leader yet, or a
// dependency down).
func IsUnavailable(err error) bool { return hasStatus(err, http.StatusServiceUnavailable) }

// IsRetryable reports whether err is an API error worth retrying later
// (see Error.Retryable).
func IsRetryable(err error) bool {
	e, ok := AsError(err)
	return ok && e.Retryable()
}

// parseError turns a non-2xx response into an *Error. A body that is not
// the API's error shape (a proxy's HTML page, say) still yields an Error
// with a code derived from the status.
func parseError(resp *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{
		Status:     resp.StatusCode,
		RequestID:  resp.Header.Get(RequestIDHeader),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
	var body wire.ErrorBody
	if json.Unmarshal(raw, &body) == nil && body.Error != nil && body.Error.Code != "" {
		e.Code, e.Message, e.Field = string(body.Error.Code), body.Error.Message, body.Error.Field
		if body.Error.RequestID != "" {
			e.RequestID = body.Error.RequestID
		}
		return e
	}
	e.Code = codeForStatus(resp.StatusCode)
	e.Message = strings.TrimSpace(string(raw))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeBadRequest
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return CodeNotFound
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case http.StatusTooManyRequests:
		return CodeRateLimited
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return CodeUnavailable
	}
	return CodeInternal
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
