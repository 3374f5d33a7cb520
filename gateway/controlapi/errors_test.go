package controlapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// What a tenant is told of each way a call to control fails.
func TestForTenant(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	tell := func(err error) *apierr.Error { return apierr.From(ForTenant(log, "req_1", err)) }
	require.NoError(t, ForTenant(log, "req_1", nil))

	// Control's 400, 404, 409, 422 and 429 come back as control said them.
	field := Refusal(apierr.Field("cron", "cron is required"))
	field.Body = []byte(`{"error":{"code":"bad_request","message":"cron is required","field":"cron","request_id":"req_ctl"}}`)
	e := tell(field)
	require.Equal(t, apierr.BadRequest, e.Code)
	require.Equal(t, "cron", e.Field)
	require.Equal(t, "cron is required", e.Message)
	require.Empty(t, e.RequestID, "control's request id is not the tenant's")
	require.Equal(t, apierr.NotFound, tell(Refusal(apierr.New(apierr.NotFound, "backup not found"))).Code)
	require.Equal(t, apierr.RoleInUse, tell(Refusal(apierr.New(apierr.RoleInUse, "in use"))).Code)
	e = tell(Refusal(apierr.OfField(apierr.IdempotencyKeyReused, wire.IdempotencyKeyHeader, "used for another request")))
	require.Equal(t, apierr.IdempotencyKeyReused, e.Code)
	require.Equal(t, wire.IdempotencyKeyHeader, e.Field)
	e = tell(Refusal(apierr.New(apierr.QuotaExceeded, `the max_keys limit of 2 of plan "tiny" is reached`)))
	require.Equal(t, apierr.QuotaExceeded, e.Code)
	require.Contains(t, e.Message, "max_keys")
	// A body that says nothing: the status's own error.
	e = tell(&Error{Status: http.StatusConflict, Body: []byte("busy")})
	require.Equal(t, apierr.Conflict, e.Code)
	require.Equal(t, "Conflict", e.Message)

	// A 503 passes with control's code and Retry-After.
	noLeader := Refusal(apierr.New(apierr.NoLeader, "no leader"))
	noLeader.RetryAfter = "3"
	e = tell(noLeader)
	require.Equal(t, apierr.NoLeader, e.Code)
	require.Equal(t, 3, e.RetryAfter)
	e = tell(&Error{Status: http.StatusServiceUnavailable, Body: []byte("down")})
	require.Equal(t, apierr.Unavailable, e.Code)
	require.Equal(t, 1, e.RetryAfter)

	// Anything else: control is unwell, or away.
	e = tell(&Error{Status: http.StatusInternalServerError, Body: []byte("boom")})
	require.Equal(t, apierr.Unavailable, e.Code)
	require.Contains(t, e.Message, "could not serve this request")
	e = tell(errors.New("dial tcp: refused"))
	require.Equal(t, apierr.Unavailable, e.Code)
	require.Equal(t, "the control plane is unavailable; retry shortly", e.Message)
	require.Equal(t, apierr.Internal, tell(fmt.Errorf("x: %w", ErrUndecodable)).Code)
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	require.True(t, NotFound(fmt.Errorf("wrapped: %w", Refusal(apierr.New(apierr.NotFound, "no plan")))))
	require.False(t, NotFound(Refusal(apierr.New(apierr.Conflict, "x"))))
	require.False(t, NotFound(errors.New("down")))
}
