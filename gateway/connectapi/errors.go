package connectapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/jobbie/jobbie/wire"
)

// codes is the one table of how the HTTP API's statuses become Connect
// codes (docs/api/grpc.md). A 409 is Aborted: the job or queue was not in
// a state the call could act on (conflict), or the lease it named was no
// longer the job's (lease_mismatch); read it again and decide. A 500 is
// the gateway's or the shard's bug, Internal, not to be retried; every
// other 5xx is Unavailable, to be retried after RetryInfo's delay.
var codes = map[int]connect.Code{
	http.StatusBadRequest:                  connect.CodeInvalidArgument,
	http.StatusUnauthorized:                connect.CodeUnauthenticated,
	http.StatusForbidden:                   connect.CodePermissionDenied,
	http.StatusNotFound:                    connect.CodeNotFound,
	http.StatusMethodNotAllowed:            connect.CodeUnimplemented,
	http.StatusConflict:                    connect.CodeAborted,
	http.StatusRequestEntityTooLarge:       connect.CodeResourceExhausted,
	http.StatusRequestHeaderFieldsTooLarge: connect.CodeInvalidArgument,
	http.StatusTooManyRequests:             connect.CodeResourceExhausted,
	http.StatusInternalServerError:         connect.CodeInternal,
	http.StatusBadGateway:                  connect.CodeUnavailable,
	http.StatusServiceUnavailable:          connect.CodeUnavailable,
	http.StatusGatewayTimeout:              connect.CodeUnavailable,
}

// Code is the Connect code of an HTTP API status.
func Code(status int) connect.Code {
	if c, ok := codes[status]; ok {
		return c
	}
	if status >= 500 {
		return connect.CodeUnavailable
	}
	return connect.CodeUnknown
}

// errorDomain is ErrorInfo's domain: its reason is the HTTP API's error
// code (wire.ErrorCode).
const errorDomain = "jobbie.dev"

// answerError is the Connect error of an answer that is not a success:
// the code of its status, the HTTP API's message, and as details its
// error code and request id (ErrorInfo), the field of a 400 (BadRequest)
// and the Retry-After of a 429 or 503 (RetryInfo, and the Retry-After
// metadata).
func answerError(a Answer) error {
	var body wire.ErrorBody
	e := &wire.Error{Code: wire.CodeInternal, Message: http.StatusText(a.Status)}
	if json.Unmarshal(a.Body, &body) == nil && body.Error != nil {
		e = body.Error
	}
	if e.RequestID == "" {
		e.RequestID = a.RequestID
	}
	msg := e.Message
	if e.Field != "" && !strings.Contains(msg, e.Field) {
		msg = e.Field + ": " + msg
	}
	ce := connect.NewError(Code(a.Status), errors.New(msg))
	meta := map[string]string{"http_status": strconv.Itoa(a.Status)}
	if e.RequestID != "" {
		meta["request_id"] = e.RequestID
	}
	addDetail(ce, &errdetails.ErrorInfo{Reason: string(e.Code), Domain: errorDomain, Metadata: meta})
	if e.Field != "" {
		addDetail(ce, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: e.Field, Description: e.Message}}})
	}
	if secs, err := strconv.Atoi(a.RetryAfter); err == nil && secs >= 0 {
		addDetail(ce, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)})
		ce.Meta().Set("Retry-After", a.RetryAfter)
	}
	return ce
}

// fieldError is InvalidArgument naming field, for a call refused before
// it becomes a request.
func fieldError(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	ce := connect.NewError(connect.CodeInvalidArgument, errors.New(msg))
	addDetail(ce, &errdetails.ErrorInfo{Reason: string(wire.CodeBadRequest), Domain: errorDomain, Metadata: map[string]string{"http_status": "400"}})
	addDetail(ce, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: msg}}})
	return ce
}

func addDetail(ce *connect.Error, m proto.Message) {
	if d, err := connect.NewErrorDetail(m); err == nil {
		ce.AddDetail(d)
	}
}
