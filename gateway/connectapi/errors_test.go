package connectapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// details are a Connect error's ErrorInfo, BadRequest and RetryInfo.
func details(t *testing.T, err error) (*connect.Error, *errdetails.ErrorInfo, *errdetails.BadRequest, *errdetails.RetryInfo) {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	var info *errdetails.ErrorInfo
	var bad *errdetails.BadRequest
	var retry *errdetails.RetryInfo
	for _, d := range ce.Details() {
		v, err := d.Value()
		require.NoError(t, err)
		switch v := v.(type) {
		case *errdetails.ErrorInfo:
			info = v
		case *errdetails.BadRequest:
			bad = v
		case *errdetails.RetryInfo:
			retry = v
		}
	}
	return ce, info, bad, retry
}

// Each status the HTTP API answers becomes its Connect code, with the
// error code and request id, the field of a 400 and the delay of a
// Retry-After; a success is read into the response. The route here is a
// fake: what the real route table answers is tested against jobbie dev
// (cmd/jobbie/grpc_dev_test.go).
func TestAnswersBecomeConnectCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status     int
		body       string
		retryAfter string
		code       connect.Code
		reason     string
		field      string
		retry      time.Duration
	}{
		{400, `{"error":{"code":"bad_request","message":"priority must be one of critical, high, normal","field":"priority","request_id":"r1"}}`, "", connect.CodeInvalidArgument, "bad_request", "priority", 0},
		{401, `{"error":{"code":"unauthenticated","message":"missing API key","request_id":"r1"}}`, "", connect.CodeUnauthenticated, "unauthenticated", "", 0},
		{403, `{"error":{"code":"forbidden","message":"no","request_id":"r1"}}`, "", connect.CodePermissionDenied, "forbidden", "", 0},
		{404, `{"error":{"code":"not_found","message":"job j not found","request_id":"r1"}}`, "", connect.CodeNotFound, "not_found", "", 0},
		{409, `{"error":{"code":"lease_mismatch","message":"stale lease","request_id":"r1"}}`, "", connect.CodeAborted, "lease_mismatch", "", 0},
		{413, `{"error":{"code":"payload_too_large","message":"too big","request_id":"r1"}}`, "", connect.CodeResourceExhausted, "payload_too_large", "", 0},
		{429, `{"error":{"code":"rate_limited","message":"slow down","request_id":"r1"}}`, "3", connect.CodeResourceExhausted, "rate_limited", "", 3 * time.Second},
		{500, `{"error":{"code":"internal","message":"bug","request_id":"r1"}}`, "", connect.CodeInternal, "internal", "", 0},
		{502, `{"error":{"code":"shard_answer_too_large","message":"big","request_id":"r1"}}`, "", connect.CodeUnavailable, "shard_answer_too_large", "", 0},
		{503, `{"error":{"code":"no_leader","message":"electing","request_id":"r1"}}`, "1", connect.CodeUnavailable, "no_leader", "", time.Second},
		{503, `not json`, "", connect.CodeUnavailable, "internal", "", 0},
	}
	for _, tc := range cases {
		s := New(func(r *Request) Answer {
			return Answer{Status: tc.status, RetryAfter: tc.retryAfter, RequestID: "r1", Body: []byte(tc.body)}
		}, WorkConfig{}, ScalerConfig{})
		_, err := s.Enqueue(context.Background(), connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "q"}))
		ce, info, bad, retry := details(t, err)
		require.Equal(t, tc.code, ce.Code(), "%d", tc.status)
		require.Equal(t, tc.reason, info.GetReason(), "%d", tc.status)
		require.Equal(t, "r1", info.GetMetadata()["request_id"])
		require.Equal(t, "r1", ce.Meta().Get("X-Request-Id"))
		if tc.field != "" {
			require.Equal(t, tc.field, bad.GetFieldViolations()[0].GetField())
			require.Contains(t, ce.Message(), tc.field)
		} else {
			require.Nil(t, bad)
		}
		if tc.retry > 0 {
			require.Equal(t, tc.retry, retry.GetRetryDelay().AsDuration())
			require.Equal(t, tc.retryAfter, ce.Meta().Get("Retry-After"))
		} else {
			require.Nil(t, retry)
		}
	}
}

// A call reaches the route as the HTTP API's request: its method, path
// and JSON body, and of its metadata only the key, the namespace and the
// request id (a console cookie never: calls authenticate with keys).
func TestCallsBecomeRequests(t *testing.T) {
	t.Parallel()
	var got *Request
	s := New(func(r *Request) Answer {
		got = r
		return Answer{Status: 201, RequestID: "r2", Body: []byte(`{"job_id":"job_1","status":"pending","unique_existing":false,"later":1}`)}
	}, WorkConfig{}, ScalerConfig{})
	zero := int32(0)
	req := connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "q", MaxRetries: &zero, Tags: map[string]string{"a": "b"}})
	req.Header().Set("Authorization", "Bearer k")
	req.Header().Set("X-Jobbie-Namespace", "ns")
	req.Header().Set("Cookie", "jobbie_session=s")
	res, err := s.Enqueue(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "job_1", res.Msg.GetJobId(), "a field the message does not carry is passed over")
	require.Equal(t, "r2", res.Header().Get("X-Request-Id"))
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/api/v1/enqueue", got.Path)
	require.JSONEq(t, `{"queue":"q","max_retries":0,"tags":{"a":"b"}}`, string(got.Body))
	require.Equal(t, http.Header{"Authorization": {"Bearer k"}, "X-Jobbie-Namespace": {"ns"}}, got.Header)

	_, err = s.GetJob(context.Background(), connect.NewRequest(&jobbiev1.GetJobRequest{Id: "../queues"}))
	_, _, bad, _ := details(t, err)
	require.Equal(t, "id", bad.GetFieldViolations()[0].GetField())

	got = nil
	_, err = s.ListDeadJobs(context.Background(), connect.NewRequest(&jobbiev1.ListDeadJobsRequest{Queue: "a b", Limit: 5}))
	require.NoError(t, err)
	require.Equal(t, "/api/v1/dead?limit=5&queue=a+b", got.Path)
}
