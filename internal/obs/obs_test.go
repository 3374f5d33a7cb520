package obs

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

func TestServeWritesTheRegistry(t *testing.T) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "jobbie_obs_test_total", Help: "test"})
	Registry.MustRegister(c)
	defer Registry.Unregister(c)
	c.Add(3)
	app := fiber.New(fiber.Config{ErrorHandler: apierr.Handler})
	app.Get("/metrics", Serve())
	res, err := app.Test(httptest.NewRequest("GET", "/metrics", nil))
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	body, _ := io.ReadAll(res.Body)
	require.Contains(t, string(body), "jobbie_obs_test_total 3")
	require.Contains(t, string(body), "go_goroutines")
}
