package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func TestEveryCodeHasItsStatus(t *testing.T) {
	t.Parallel()
	want := map[Code]int{BadRequest: 400, InvalidJSON: 400, Unauthenticated: 401, Forbidden: 403, NotFound: 404, MethodNotAllowed: 405,
		Conflict: 409, LeaseMismatch: 409, TooLarge: 413, RateLimited: 429, QuotaExceeded: 429, NoLeader: 503, Unavailable: 503, Internal: 500,
		ConnectionLimit: 429, KeyLongPollLimit: 429, TenantLongPollLimit: 429, HeadersTooLarge: 431, RevocationsStale: 503,
		ShardAnswerTooLarge: 502, SelfHostedBudget: 503,
		DeletionProtected: 409, NamespaceNotEmpty: 409, RoleInUse: 409, NamespaceMoving: 503,
		AmbiguousName: 409, IdempotencyKeyReused: 422, SchemaChanged: 409, BudgetExceeded: 429,
		EncryptionKeyRevoked: 409, EncryptionOff: 409}
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

// A known path asked with a method it does not serve is 405 with Allow
// naming the methods it does, not a 404 that says the endpoint is not
// there.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	app := fiber.New(fiber.Config{ErrorHandler: Handler})
	app.Use(RequestID)
	app.Post("/enqueue", func(c *fiber.Ctx) error { return c.SendStatus(204) })
	app.Get("/jobs/:id", func(c *fiber.Ctx) error { return c.SendStatus(204) })
	app.Delete("/jobs/:id", func(c *fiber.Ctx) error { return c.SendStatus(204) })
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/enqueue", "POST"},
		{"PUT", "/jobs/j1", "GET, HEAD, DELETE"},
	} {
		res, err := app.Test(httptest.NewRequest(tc.method, tc.path, nil))
		require.NoError(t, err)
		raw, _ := io.ReadAll(res.Body)
		require.Equal(t, 405, res.StatusCode, string(raw))
		require.Equal(t, tc.allow, res.Header.Get("Allow"))
		var b wire.ErrorBody
		require.NoError(t, json.Unmarshal(raw, &b), string(raw))
		require.Equal(t, MethodNotAllowed, b.Error.Code)
		require.Contains(t, b.Error.Message, tc.allow)
		require.NotEmpty(t, b.Error.RequestID)
	}
	res, err := app.Test(httptest.NewRequest("GET", "/nowhere", nil))
	require.NoError(t, err)
	require.Equal(t, 404, res.StatusCode, "an unknown path is still 404")
	require.Empty(t, res.Header.Get("Allow"))
}

// Headers over the server's read buffer are refused before routing, by
// fasthttp; they still get 431 in the catalog shape, with a request id.
func TestOversizedHeadersAre431(t *testing.T) {
	t.Parallel()
	app := fiber.New(fiber.Config{ErrorHandler: Handler, ReadBufferSize: 4 << 10, DisableStartupMessage: true})
	app.Use(RequestID)
	app.Get("/", func(c *fiber.Ctx) error { return c.SendStatus(204) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	t.Cleanup(func() { require.NoError(t, app.Shutdown()); <-served })

	req, err := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
	require.NoError(t, err)
	req.Header.Set("X-Long", strings.Repeat("a", 5<<10))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	require.Equal(t, 431, res.StatusCode, string(raw))
	var b wire.ErrorBody
	require.NoError(t, json.Unmarshal(raw, &b), string(raw))
	require.Equal(t, HeadersTooLarge, b.Error.Code)
	require.NotEmpty(t, b.Error.RequestID)
	require.Equal(t, b.Error.RequestID, res.Header.Get(RequestIDHeader))
}
