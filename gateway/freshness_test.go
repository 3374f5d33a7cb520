package gateway

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// A gateway that cannot refresh its revocation list honours keys for as
// long as the list is within its bound, then refuses every key with 503
// (a key revoked meanwhile included) until control answers again.
func TestStaleRevocationListRefusesKeys(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	logs := &syncBuffer{}
	b := setup(t, func(c *Config) {
		c.Clock, c.RevocationInterval, c.RevocationMaxAge = clk, time.Second, 10*time.Second
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	key := b.key(t, tenancy.RoleProducer, "default")
	enqueue := func() reply { return b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody) }
	require.Equal(t, http.StatusCreated, enqueue().status)

	lastFetch := clk.Now()
	b.control.SetRevocationsDown(true)
	b.control.Revoke("key_producer") // the gateway cannot learn of it
	var refused reply
	for {
		tick(t, clk, time.Second)
		r := enqueue()
		if clk.Since(lastFetch) <= 10*time.Second {
			require.Equal(t, http.StatusCreated, r.status, "within the bound the cached list is used: %s", r.body)
			continue
		}
		refused = r
		break
	}
	e := refused.requireError(t, http.StatusServiceUnavailable, apierr.RevocationsStale)
	require.Contains(t, e.Message, "11s old, over its bound of 10s")
	require.Equal(t, "5", refused.header.Get("Retry-After"))
	b.do(t, http.MethodGet, "/api/v1/namespaces", b.key(t, tenancy.RoleOwner, "*"), nil).
		requireError(t, http.StatusServiceUnavailable, apierr.RevocationsStale)
	e = b.do(t, http.MethodGet, "/readyz", "", nil).requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Contains(t, e.Message, "revocation list")
	age, _ := b.gw.gate.RevocationAge(clk.Now())
	require.Equal(t, 11*time.Second, age)
	require.GreaterOrEqual(t, oldestRevocationList(), 11.0, "the metric reports the oldest list in the process")
	require.Contains(t, logs.String(), "revocation list is older than its freshness bound")

	b.control.SetRevocationsDown(false)
	tick(t, clk, time.Second)
	e = enqueue().requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "revoked")
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/readyz", "", nil).status)
	require.Contains(t, logs.String(), "revocation list is fresh again")
}
