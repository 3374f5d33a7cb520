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

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Code is a stable, documented error code; the codes themselves are the
// wire package's, which clients read.
type Code = wire.ErrorCode

// The codes by their short names (see wire for what each means).
const (
	BadRequest       = wire.CodeBadRequest
	InvalidJSON      = wire.CodeInvalidJSON
	Unauthenticated  = wire.CodeUnauthenticated
	Forbidden        = wire.CodeForbidden
	NotFound         = wire.CodeNotFound
	MethodNotAllowed = wire.CodeMethodNotAllowed
	Conflict         = wire.CodeConflict
	LeaseMismatch    = wire.CodeLeaseMismatch
	TooLarge         = wire.CodeTooLarge
	RateLimited      = wire.CodeRateLimited
	NoLeader         = wire.CodeNoLeader
	Unavailable      = wire.CodeUnavailable
	Internal         = wire.CodeInternal

	ConnectionLimit     = wire.CodeConnectionLimit
	KeyLongPollLimit    = wire.CodeKeyLongPollLimit
	TenantLongPollLimit = wire.CodeTenantLongPollLimit
	HeadersTooLarge     = wire.CodeHeadersTooLarge
	RevocationsStale    = wire.CodeRevocationsStale
	ShardAnswerTooLarge = wire.CodeShardAnswerTooLarge
	SelfHostedBudget    = wire.CodeSelfHostedBudget

	DeletionProtected = wire.CodeDeletionProtected
	NamespaceNotEmpty = wire.CodeNamespaceNotEmpty
	RoleInUse         = wire.CodeRoleInUse

	QuotaExceeded  = wire.CodeQuotaExceeded
	BudgetExceeded = wire.CodeBudgetExceeded

	NamespaceMoving = wire.CodeNamespaceMoving

	AmbiguousName = wire.CodeAmbiguousName

	SchemaChanged = wire.CodeSchemaChanged

	IdempotencyKeyReused = wire.CodeIdempotencyKeyReused

	EncryptionKeyRevoked = wire.CodeEncryptionKeyRevoked
	EncryptionOff        = wire.CodeEncryptionOff
)

var statuses = map[Code]int{
	BadRequest:       http.StatusBadRequest,
	InvalidJSON:      http.StatusBadRequest,
	Unauthenticated:  http.StatusUnauthorized,
	Forbidden:        http.StatusForbidden,
	NotFound:         http.StatusNotFound,
	MethodNotAllowed: http.StatusMethodNotAllowed,
	Conflict:         http.StatusConflict,
	LeaseMismatch:    http.StatusConflict,
	TooLarge:         http.StatusRequestEntityTooLarge,
	RateLimited:      http.StatusTooManyRequests,
	QuotaExceeded:    http.StatusTooManyRequests,
	BudgetExceeded:   http.StatusTooManyRequests,
	NoLeader:         http.StatusServiceUnavailable,
	Unavailable:      http.StatusServiceUnavailable,
	Internal:         http.StatusInternalServerError,

	ConnectionLimit:     http.StatusTooManyRequests,
	KeyLongPollLimit:    http.StatusTooManyRequests,
	TenantLongPollLimit: http.StatusTooManyRequests,
	HeadersTooLarge:     http.StatusRequestHeaderFieldsTooLarge,
	RevocationsStale:    http.StatusServiceUnavailable,
	ShardAnswerTooLarge: http.StatusBadGateway,
	SelfHostedBudget:    http.StatusServiceUnavailable,

	DeletionProtected: http.StatusConflict,
	NamespaceNotEmpty: http.StatusConflict,
	RoleInUse:         http.StatusConflict,

	NamespaceMoving: http.StatusServiceUnavailable,

	AmbiguousName: http.StatusConflict,
	SchemaChanged: http.StatusConflict,

	IdempotencyKeyReused: http.StatusUnprocessableEntity,

	EncryptionKeyRevoked: http.StatusConflict,
	EncryptionOff:        http.StatusConflict,
}

// Status is the HTTP status of a code.
func Status(c Code) int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is an API error. Its JSON is wire.Error (see Wire).
type Error struct {
	Code       Code
	Message    string
	Field      string // the offending input field of a 400
	RequestID  string
	RetryAfter int // seconds; set for 429 and 503
}

// Wire is e's JSON shape.
func (e *Error) Wire() *wire.Error {
	return &wire.Error{Code: e.Code, Message: e.Message, Field: e.Field, RequestID: e.RequestID}
}

// FromWire is the error an error response's body describes.
func FromWire(w *wire.Error) *Error {
	return &Error{Code: w.Code, Message: w.Message, Field: w.Field, RequestID: w.RequestID}
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
	return OfField(BadRequest, field, format, args...)
}

// Invalid is a validation error as a 400: naming its field when it is a
// tenancy.FieldError or a wire.FieldError, nil for nil.
func Invalid(err error) error {
	var fe *tenancy.FieldError
	var we *wire.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return Field(fe.Field, "%s", fe.Msg)
	case errors.As(err, &we):
		return Field(we.Field, "%s", we.Msg)
	}
	return New(BadRequest, "%v", err)
}

// OfField returns an error of code naming the offending field (a 413
// names the field that is too large).
func OfField(code Code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
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
