package api

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

func fairApp(s *Server) *fiber.App {
	app := fiber.New()
	app.Get("/x", s.fairKey, func(c *fiber.Ctx) error { return c.SendString(replica.FairKey(c.UserContext())) })
	return app
}

func get(t *testing.T, app *fiber.App, ns, weight string) string {
	t.Helper()
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header.Set(wire.ShardNamespaceHeader, ns)
	if weight != "" {
		req.Header.Set(wire.FairWeightHeader, weight)
	}
	res, err := app.Test(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	return string(body)
}

// A request's proposals carry its namespace as their fairness key.
func TestFairKeyIsTheRequestsNamespace(t *testing.T) {
	app := fairApp(&Server{weights: NewWeights()})
	for _, ns := range []string{"t_a/emails", "t_b/default"} {
		require.Equal(t, ns, get(t, app, ns, ""))
	}
}

// The weight a request carries is its namespace's, last seen wins; values
// out of range or not integers change nothing.
func TestFairKeyRecordsTheWeight(t *testing.T) {
	w := NewWeights()
	app := fairApp(&Server{weights: w})
	require.Equal(t, 1, w.Of("t_a/x"), "unknown namespace weighs 1")
	get(t, app, "t_a/x", "7")
	require.Equal(t, 7, w.Of("t_a/x"))
	require.Equal(t, 1, w.Of("t_b/x"), "another namespace keeps its own")
	for _, bad := range []string{"0", "1001", "-3", "abc", "2.5", "99999"} {
		get(t, app, "t_a/x", bad)
		require.Equal(t, 7, w.Of("t_a/x"), "weight %q ignored", bad)
	}
	get(t, app, "t_a/x", "")
	require.Equal(t, 7, w.Of("t_a/x"), "no header keeps the weight")
	get(t, app, "t_a/x", "1000")
	require.Equal(t, 1000, w.Of("t_a/x"))
	get(t, app, "t_a/x", "1")
	require.Equal(t, 1, w.Of("t_a/x"), "last seen wins")
}

// The table is bounded: a full one starts over rather than growing.
func TestWeightsBounded(t *testing.T) {
	w := NewWeights()
	for i := range maxWeighted + 10 {
		w.set(string(rune('a'+i%26))+string(rune(i)), 2)
	}
	require.LessOrEqual(t, len(w.m), maxWeighted)
	require.Equal(t, 1, (*Weights)(nil).Of("x"))
}
