package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/fairshare"
	"github.com/jobbie/jobbie/wire"
)

// Each request takes a slot of the pool its kind of work needs.
func TestSlotClasses(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         slotClass
	}{
		{"POST", "/api/v1/jobs/search", readSlot},
		{"POST", "/api/v1/jobs/search/", readSlot},
		{"POST", "/api/v1/jobs/bulk", readSlot},
		{"GET", "/api/v1/dead", readSlot},
		{"POST", "/api/v1/enqueue", workSlot},
		{"POST", "/api/v1/enqueue/batch", workSlot},
		{"POST", "/api/v1/ack/01hx", workSlot},
		{"POST", "/api/v1/fail/01hx", workSlot},
		{"POST", "/api/v1/heartbeat", workSlot},
		{"GET", "/api/v1/bulk/01hx", workSlot},
		{"POST", "/api/v1/fetch", noSlot},
		{"POST", "/api/v1/fetch/batch", noSlot},
		{"GET", "/api/v1/events", noSlot},
		{"GET", "/api/v1/bulk/01hx/progress", noSlot},
	} {
		require.Equal(t, tc.want, classOf(tc.method, tc.path), "%s %s", tc.method, tc.path)
	}
}

// slotApp serves search (held until release closes) and enqueue behind
// s.slot, with a read pool of one slot and one waiter per namespace.
func slotApp(t *testing.T, release <-chan struct{}) (*fiber.App, *Server) {
	s := &Server{pools: pools{
		work:    fairshare.New(fairshare.Config{Name: "test work"}),
		reads:   fairshare.New(fairshare.Config{Name: "test reads", Slots: 1, PerKey: 1, MaxWaiting: 1, MaxWait: 100 * time.Millisecond}),
		working: newInFlight(),
	}}
	app := fiber.New(fiber.Config{ErrorHandler: apierr.Handler})
	app.Post("/api/v1/jobs/search", s.slot, func(c *fiber.Ctx) error { <-release; return c.SendString("ok") })
	app.Post("/api/v1/enqueue", s.slot, func(c *fiber.Ctx) error { return c.SendString("ok") })
	return app, s
}

type answer struct {
	status     int
	retryAfter string
	code, msg  string
}

func send(t *testing.T, app *fiber.App, path, ns string) answer {
	req := httptest.NewRequest("POST", path, nil)
	req.Header.Set(wire.ShardNamespaceHeader, ns)
	res, err := app.Test(req, -1)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	return answer{res.StatusCode, res.Header.Get("Retry-After"), body.Error.Code, body.Error.Message}
}

// A namespace whose heavy reads fill its share is refused with 429 and
// Retry-After naming why; one that waited behind others' reads gets
// 503; the lifecycle path never waits behind either.
func TestHeavyReadRefusals(t *testing.T) {
	release := make(chan struct{})
	app, s := slotApp(t, release)
	first := make(chan answer)
	go func() { first <- send(t, app, "/api/v1/jobs/search", "t_a/x") }()
	require.Eventually(t, func() bool { return readsHeld(s) }, 10*time.Second, time.Millisecond)

	own := send(t, app, "/api/v1/jobs/search", "t_a/x") // waits its bound behind its own read
	require.Equal(t, 429, own.status, own.msg)
	require.Equal(t, string(wire.CodeRateLimited), own.code)
	require.Equal(t, "1", own.retryAfter)
	require.Contains(t, own.msg, fairshare.ReasonWaited)
	require.Contains(t, own.msg, "heavy reads")

	other := send(t, app, "/api/v1/jobs/search", "t_b/x")
	require.Equal(t, 503, other.status, other.msg)
	require.Equal(t, "1", other.retryAfter)
	require.Contains(t, other.msg, fairshare.ReasonPoolBusy)

	require.Equal(t, 200, send(t, app, "/api/v1/enqueue", "t_b/x").status, "an enqueue takes a work slot, not a read slot")
	close(release)
	require.Equal(t, 200, (<-first).status)
}

func readsHeld(s *Server) bool {
	sl, err := s.pools.reads.Acquire(canceled(), "probe", 1)
	if err == nil {
		sl.Release()
		return false
	}
	return true
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
