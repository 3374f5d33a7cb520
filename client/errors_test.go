package client_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/stretchr/testify/require"
)

func TestErrorFromAPIShape(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusBadRequest,
		`{"error":{"code":"bad_request","message":"queue is required","field":"queue","request_id":"req_1"}}`)
	_, err := rec.client(t).Enqueue(context.Background(), client.EnqueueRequest{})
	require.Error(t, err)

	wrapped := fmt.Errorf("outer: %w", err)
	e, ok := client.AsError(wrapped)
	require.True(t, ok)
	require.Equal(t, &client.Error{Status: 400, Code: "bad_request", Message: "queue is required",
		Field: "queue", RequestID: "req_1"}, e)
	require.True(t, client.IsBadRequest(wrapped))
	require.False(t, client.IsNotFound(wrapped))
	require.False(t, client.IsRetryable(wrapped))
	require.Equal(t, client.CodeBadRequest, client.ErrorCode(wrapped))
	require.Contains(t, err.Error(), "queue is required")
	require.Contains(t, err.Error(), "field queue")
}

func TestErrorRetryAfter(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		header string
		min    time.Duration
		max    time.Duration
	}{
		"seconds":   {header: "7", min: 7 * time.Second, max: 7 * time.Second},
		"http date": {header: time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), min: 58 * time.Minute, max: time.Hour},
		"garbage":   {header: "soon"},
		"missing":   {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(t, http.StatusTooManyRequests,
				`{"error":{"code":"rate_limited","message":"slow down"}}`)
			if tc.header != "" {
				rec.setHeader("Retry-After", tc.header)
			}
			_, err := rec.client(t).Enqueue(context.Background(), client.EnqueueRequest{Queue: "q"})
			e, ok := client.AsError(err)
			require.True(t, ok)
			require.True(t, client.IsRateLimited(err))
			require.True(t, client.IsRetryable(err))
			require.GreaterOrEqual(t, e.RetryAfter, tc.min)
			require.LessOrEqual(t, e.RetryAfter, tc.max)
		})
	}
}

func TestErrorWithoutAPIBody(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusBadGateway, "")
	rec.respond(http.StatusBadGateway, "<html>bad gateway</html>")
	rec.setHeader(client.RequestIDHeader, "req_proxy")
	_, err := rec.client(t).GetJob(context.Background(), "job_1")
	e, ok := client.AsError(err)
	require.True(t, ok)
	require.Equal(t, http.StatusBadGateway, e.Status)
	require.Equal(t, client.CodeUnavailable, e.Code)
	require.Equal(t, "<html>bad gateway</html>", e.Message)
	require.Equal(t, "req_proxy", e.RequestID)
	require.True(t, client.IsRetryable(err))
}

// An answer too large for the gateway to pass on comes again to the same
// request: the worker loop and callers must not retry it.
func TestAnswerTooLargeIsNotRetryable(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusBadGateway,
		`{"error":{"code":"shard_answer_too_large","message":"the shard's answer is over 33554432 bytes"}}`)
	_, err := rec.client(t).GetJob(context.Background(), "job_1")
	require.Equal(t, client.CodeShardAnswerTooLarge, client.ErrorCode(err))
	require.False(t, client.IsRetryable(err))
}

func TestErrorHelpersByStatus(t *testing.T) {
	t.Parallel()
	helpers := map[int]func(error) bool{
		400: client.IsBadRequest, 401: client.IsUnauthenticated, 403: client.IsForbidden,
		404: client.IsNotFound, 409: client.IsConflict, 413: client.IsTooLarge,
		429: client.IsRateLimited, 503: client.IsUnavailable,
	}
	for status, is := range helpers {
		err := fmt.Errorf("wrapped: %w", &client.Error{Status: status})
		require.True(t, is(err), status)
		for other, isOther := range helpers {
			if other != status {
				require.False(t, isOther(err), "%d matched helper of %d", status, other)
			}
		}
	}
	require.True(t, client.IsLeaseMismatch(&client.Error{Status: 409, Code: client.CodeLeaseMismatch}))
	require.False(t, client.IsNotFound(fmt.Errorf("plain")))
	require.Empty(t, client.ErrorCode(fmt.Errorf("plain")))
}

// TestCodesMatchCatalog keeps the SDK's codes in step with the server's
// error catalog.
func TestCodesMatchCatalog(t *testing.T) {
	t.Parallel()
	pairs := map[string]apierr.Code{
		client.CodeBadRequest: apierr.BadRequest, client.CodeInvalidJSON: apierr.InvalidJSON,
		client.CodeUnauthenticated: apierr.Unauthenticated, client.CodeForbidden: apierr.Forbidden,
		client.CodeNotFound: apierr.NotFound, client.CodeConflict: apierr.Conflict,
		client.CodeLeaseMismatch: apierr.LeaseMismatch, client.CodeTooLarge: apierr.TooLarge,
		client.CodeRateLimited: apierr.RateLimited, client.CodeNoLeader: apierr.NoLeader,
		client.CodeUnavailable: apierr.Unavailable, client.CodeInternal: apierr.Internal,
	}
	for code, want := range pairs {
		require.Equal(t, string(want), code)
	}
}

func TestTransportErrorIsNotAPIError(t *testing.T) {
	t.Parallel()
	c := client.New("http://127.0.0.1:1", "k")
	_, err := c.Enqueue(context.Background(), client.EnqueueRequest{Queue: "q"})
	require.Error(t, err)
	_, ok := client.AsError(err)
	require.False(t, ok)
}
