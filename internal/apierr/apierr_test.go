package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func TestEveryCodeHasItsStatus(t *testing.T) {
	t.Parallel()
	want := map[Code]int{BadRequest: 400, InvalidJSON: 400, Unauthenticated: 401, Forbidden: 403, NotFound: 404,
		Conflict: 409, LeaseMismatch: 409, TooLarge: 413, RateLimited: 429, NoLeader: 503, Unavailable: 503, Internal: 500}
	require.Len(t, statuses, len(want))
	for c, s := range want {
		require.Equal(t, s, Status(c), c)
	}
	require.Equal(t, 500, Status(Code("unheard_of")))
}

func TestErrorsMatchByCode(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("wrapped: %w", New(NotFound, "job %s", "x"))
	require.True(t, errors.Is(err, New(NotFound, "")))
	require.False(t, errors.Is(err, New(Conflict, "")))
	require.Equal(t, NotFound, CodeOf(err))
	require.Equal(t, Internal, From(errors.New("boom")).Code)
}

func TestHandlerRendersTheCatalogShape(t *testing.T) {
	t.Parallel()
	app := fiber.New(fiber.Config{ErrorHandler: Handler})
	app.Use(RequestID)
	app.Post("/field", func(*fiber.Ctx) error { return Field("priority", "bad priority %q", "urgent") })
	app.Post("/busy", func(*fiber.Ctx) error { return Retry(NoLeader, 2, "no leader") })
	app.Post("/boom", func(*fiber.Ctx) error { return errors.New("boom") })

	do := func(path, body string, hdr ...string) (int, string, *Error) {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := app.Test(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(res.Body)
		var b wire.ErrorBody
		require.NoError(t, json.Unmarshal(raw, &b), string(raw))
		return res.StatusCode, res.Header.Get("Retry-After"), FromWire(b.Error)
	}
	st, _, e := do("/field", "", RequestIDHeader, "req_abc")
	require.Equal(t, 400, st)
	require.Equal(t, "priority", e.Field)
	require.Equal(t, "req_abc", e.RequestID, "a well-formed incoming id is kept")
	st, ra, e := do("/busy", "")
	require.Equal(t, 503, st)
	require.Equal(t, "2", ra)
	require.NotEmpty(t, e.RequestID)
	st, _, e = do("/boom", "")
	require.Equal(t, 500, st)
	require.Equal(t, Internal, e.Code)
	st, _, e = do("/nowhere", "")
	require.Equal(t, 404, st)
	require.Equal(t, NotFound, e.Code)
	_, _, e = do("/field", "", RequestIDHeader, "bad id with spaces")
	require.NotEqual(t, "bad id with spaces", e.RequestID)
}
