package connectapi

import (
	"context"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/jobbie/jobbie/proto/gen/externalscaler/externalscalerconnect"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/wire"
)

// Route serves one request of the HTTP API in process: the gateway's
// route table, each route behind its whole chain.
type Route func(r *Request) Answer

// Request is a call as the HTTP API's request.
type Request struct {
	Method string
	Path   string // with its query
	// Header holds the call's metadata that the HTTP API reads (passed):
	// nothing else of the caller's reaches the route.
	Header http.Header
	Body   []byte // JSON, or nil
	Peer   string // the caller's address, host:port
}

// Answer is the route's answer.
type Answer struct {
	Status     int
	RetryAfter string // the Retry-After header, if any
	RequestID  string
	Replayed   bool // the answer is an earlier request's, given back under its Idempotency-Key
	Drain      bool // a fetch's answer to a drained worker (wire.WorkerDrainHeader)
	Body       []byte
}

// passed are the metadata a call hands the route: its key, its
// namespace, its request id and its Idempotency-Key (which the routes
// that do not take one refuse, InvalidArgument naming it). A console
// session cookie is not among them: calls authenticate with keys only.
var passed = []string{"Authorization", wire.NamespaceHeader, wire.RequestIDHeader, wire.IdempotencyKeyHeader}

// traced are the W3C trace context metadata a unary call also hands its
// route, as an HTTP request's headers: an enqueue's jobs that name no
// trace context of their own take them (the shard checks them, as the
// HTTP route's). A worker stream's are not passed: its metadata is the
// stream's, once, and a job enqueued on it names its own.
var traced = []string{wire.TraceParentHeader, wire.TraceStateHeader}

// Services implements JobService, AdminService, WorkerService and KEDA's
// ExternalScaler over route.
type Services struct {
	route  Route
	work   WorkConfig
	scaler ScalerConfig
}

// New serves the services over route, worker streams as work says and
// the external scaler as scaler says.
func New(route Route, work WorkConfig, scaler ScalerConfig) *Services {
	return &Services{route: route, work: work.withDefaults(), scaler: scaler.withDefaults()}
}

// The messages' field names are the HTTP API's JSON names (marshal).
// Its answers are read passing over fields the messages do not carry
// (yet), so an answer that grew a field still reads (unmarshal).
var (
	unmarshal = protojson.UnmarshalOptions{DiscardUnknown: true}
	marshal   = protojson.MarshalOptions{UseProtoNames: true}
)

// do sends the call as method path with body (JSON, or nil), and reads
// a successful answer into out. The header it returns holds the
// answer's request id, for the response or the error, and
// Idempotency-Replayed on a replay.
func (s *Services) do(ctx context.Context, h http.Header, method, path string, body []byte, out proto.Message) (http.Header, error) {
	b, meta, err := s.call(ctx, h, method, path, body)
	if err != nil {
		return meta, err
	}
	if err := unmarshal.Unmarshal(b, out); err != nil {
		return meta, connect.NewError(connect.CodeInternal, err)
	}
	return meta, nil
}

// call is do's request, answering a success's JSON body as it is.
func (s *Services) call(ctx context.Context, h http.Header, method, path string, body []byte) ([]byte, http.Header, error) {
	r := &Request{Method: method, Path: path, Header: passedOf(h, passed, traced)}
	if p, ok := connect.CallInfoForHandlerContext(ctx); ok {
		r.Peer = p.Peer().Addr
	}
	r.Body = body
	a := s.route(r)
	meta := http.Header{}
	if a.RequestID != "" {
		meta.Set(wire.RequestIDHeader, a.RequestID)
	}
	if a.Replayed {
		meta.Set(wire.IdempotencyReplayedHeader, "true")
	}
	if a.Status < 200 || a.Status > 299 {
		return nil, meta, answerError(a)
	}
	return a.Body, meta, nil
}

// body is m as the HTTP API's JSON: the messages' field names are its.
func body(m proto.Message) ([]byte, error) {
	b, err := marshal.Marshal(m)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	return b, nil
}

// segment checks v, a path parameter named field, so that the path the
// route table matches is the one the call means.
func segment(field, v string) error {
	if v == "" {
		return fieldError(field, "%s is required", field)
	}
	if v == "." || v == ".." || len(v) > 1024 || strings.ContainsAny(v, "/?#%\\") || strings.IndexFunc(v, func(r rune) bool { return r < 0x21 || r == 0x7f }) >= 0 {
		return fieldError(field, "%s %q is not a valid %s", field, v, field)
	}
	return nil
}

// respond is out, or err, with h (the answer's request id) as its
// headers.
func respond[T any](out *T, h http.Header, err error) (*connect.Response[T], error) {
	if err != nil {
		if ce, ok := err.(*connect.Error); ok {
			for k, v := range h {
				ce.Meta()[k] = v
			}
		}
		return nil, err
	}
	res := connect.NewResponse(out)
	for k, v := range h {
		res.Header()[k] = v
	}
	return res, nil
}

var (
	_ jobbiev1connect.JobServiceHandler    = (*Services)(nil)
	_ jobbiev1connect.AdminServiceHandler  = (*Services)(nil)
	_ jobbiev1connect.WorkerServiceHandler = (*Services)(nil)
)

// Handlers are the services' HTTP handlers and the paths they serve,
// each call's message (each frame of a stream) at most maxBytes.
func (s *Services) Handlers(maxBytes int) map[string]http.Handler {
	opts := []connect.HandlerOption{connect.WithReadMaxBytes(maxBytes)}
	jobs, jh := jobbiev1connect.NewJobServiceHandler(s, opts...)
	admin, ah := jobbiev1connect.NewAdminServiceHandler(s, opts...)
	work, wh := jobbiev1connect.NewWorkerServiceHandler(s, opts...)
	scaler, sh := externalscalerconnect.NewExternalScalerHandler(s, opts...)
	return map[string]http.Handler{jobs: jh, admin: ah, work: uncompressedUnlessAsked(wh), scaler: sh}
}

// streamEncodings are the headers naming a stream's encoding and the
// encodings its client accepts: gRPC and gRPC-Web's, the Connect
// protocol's.
var streamEncodings = [...]struct{ sent, accept string }{
	{"Grpc-Encoding", "Grpc-Accept-Encoding"},
	{"Connect-Content-Encoding", "Connect-Accept-Encoding"},
}

// uncompressedUnlessAsked serves a stream's frames uncompressed unless
// the client sends its own compressed. Connect answers in any encoding
// the client merely accepts (connect-go and grpc-go accept gzip on every
// call), and gzip on every job frame cost the worker stream about 4 % of
// the gateway's CPU for frames that mostly travel a LAN; a client that
// compresses what it sends still gets its frames compressed back.
func uncompressedUnlessAsked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, e := range streamEncodings {
			if v := r.Header.Get(e.sent); v == "" || v == "identity" {
				r.Header.Del(e.accept)
			}
		}
		h.ServeHTTP(w, r)
	})
}
