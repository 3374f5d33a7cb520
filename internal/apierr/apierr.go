// Package apierr is Jobbie's error catalog: every API error has a stable
// code, and this package is the one place that maps codes to HTTP statuses
// and renders them as {"error":{"code","message","field","request_id"}}.
// Shards, control and the gateway all use it, so the code travels unchanged
// from a shard through the gateway to the client.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable, documented error code.
type Code string

const (
	BadRequest      Code = "bad_request"       // malformed or invalid input; Field names it
	InvalidJSON     Code = "invalid_json"      // the body is not the JSON we expect
	Unauthenticated Code = "unauthenticated"   // no, invalid, expired or revoked key
	Forbidden       Code = "forbidden"         // the key's role or namespaces do not allow it
	NotFound        Code = "not_found"         // unknown object, or another tenant's
	Conflict        Code = "conflict"          // state conflict (exists already, wrong state)
	LeaseMismatch   Code = "lease_mismatch"    // ack/fail/heartbeat of a job not active under this lease
	TooLarge        Code = "payload_too_large" // body or payload over its limit
	RateLimited     Code = "rate_limited"      // over a rate or quota; Retry-After set
	NoLeader        Code = "no_leader"         // the shard has no leader yet; Retry-After set
	Unavailable     Code = "unavailable"       // a dependency is down; Retry-After set
	Internal        Code = "internal"          // a bug or an unexpected failure
)

var statuses = map[Code]int{
	BadRequest:      http.StatusBadRequest,
	InvalidJSON:     http.StatusBadRequest,
	Unauthenticated: http.StatusUnauthorized,
	Forbidden:       http.StatusForbidden,
	NotFound:        http.StatusNotFound,
	Conflict:        http.StatusConflict,
	LeaseMismatch:   http.StatusConflict,
	TooLarge:        http.StatusRequestEntityTooLarge,
	RateLimited:     http.StatusTooManyRequests,
	NoLeader:        http.StatusServiceUnavailable,
	Unavailable:     http.StatusServiceUnavailable,
	Internal:        http.StatusInternalServerError,
}

// Status is the HTTP status of a code.
func (c Code) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is an API error.
type Error struct {
	Code       Code   `json:"code"`
	Message    string `json:"message"`
	Field      string `json:"field,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	RetryAfter int    `json:"-"` // seconds; set for 429 and 503
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (field %s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Is lets errors.Is match on the code: errors.Is(err, apierr.New(NotFound, "")).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// New returns an error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Field returns a 400 naming the offending field.
func Field(field, format string, args ...any) *Error {
	return &Error{Code: BadRequest, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Retry returns an error that tells the client to retry after secs seconds.
func Retry(code Code, secs int, format string, args ...any) *Error {
	e := New(code, format, args...)
	e.RetryAfter = secs
	return e
}

// From returns err as an *Error, treating unknown errors as internal.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: err.Error()}
}

// CodeOf returns the code of err, or "" when err is not an API error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Body is the JSON body of an error response.
type Body struct {
	Error *Error `json:"error"`
}
