package gateway

import (
	"net/http"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// With control gone, a namespace's last placement serves on past the
// placement TTL, one miss TTL at a time; a namespace never placed fails
// with 503.
func TestPlacementOutlivesControl(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	clk := clockwork.NewFakeClock()
	b.start(t, func(c *Config) { c.Clock = clk })
	b.waitReady(t)
	key := b.key(t, tenancy.RoleProducer, "default", "emails")

	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, int64(1), b.control.PlacementCalls.Load())

	b.control.SetGone(true) // control is gone
	tick(t, clk, b.gw.cfg.PlacementTTL+b.gw.cfg.PlacementMissTTL)
	for range 3 {
		r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status, "the expired placement serves on: %s", r.body)
		tick(t, clk, b.gw.cfg.PlacementMissTTL)
	}
	b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody, wire.NamespaceHeader, "emails").
		requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
}
