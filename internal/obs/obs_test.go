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

func TestMetricsNeedTheClusterSecret(t *testing.T) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "jobbie_obs_test_total", Help: "test"})
	Registry.MustRegister(c)
	defer Registry.Unregister(c)
	c.Add(3)
	app := fiber.New(fiber.Config{ErrorHandler: apierr.Handler})
	app.Get("/metrics", Handler("s3cret-s3cret-s3cret"))
	for _, auth := range []string{"", "Bearer wrong", "s3cret-s3cret-s3cret"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := app.Test(req)
		require.NoError(t, err)
		require.Equal(t, 401, res.StatusCode, auth)
	}
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer s3cret-s3cret-s3cret")
	res, err := app.Test(req)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	body, _ := io.ReadAll(res.Body)
	require.Contains(t, string(body), "jobbie_obs_test_total 3")
	require.Contains(t, string(body), "go_goroutines")
}
