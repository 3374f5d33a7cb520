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

// A request's proposals carry its namespace as their fairness key.
func TestFairKeyIsTheRequestsNamespace(t *testing.T) {
	app := fiber.New()
	app.Get("/x", fairKey, func(c *fiber.Ctx) error { return c.SendString(replica.FairKey(c.UserContext())) })
	for _, ns := range []string{"t_a/emails", "t_b/default"} {
		req := httptest.NewRequest("GET", "/x", nil)
		req.Header.Set(wire.ShardNamespaceHeader, ns)
		res, err := app.Test(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		require.Equal(t, ns, string(body))
	}
}
