package control

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// TestBackupPolicyMinInterval: a policy whose cron fires more often than
// the operator's minimum is a 400 naming cron, and sets nothing; the gap
// is judged in the policy's zone and on its next runs, not only the
// first two; another tenant's namespace stays a 404.
func TestBackupPolicyMinInterval(t *testing.T) {
	t.Parallel()
	w := backupSetup(t, func(c *Config) { c.BackupPolicyMinInterval = time.Hour })
	w.ns(t, w.tid, "orders")
	pp := w.path(w.tid, "/namespaces/orders/backup-policy")
	for _, spec := range []string{"@every 1s", "@every 59m", "*/30 * * * *", "0,45 3 * * *", "0,30 3 * * 1"} {
		r := w.gw.do(t, http.MethodPut, pp, "", wire.BackupPolicyRequest{Cron: spec, Retention: 1})
		requireError(t, r, 400, "bad_request", "cron")
		require.Contains(t, string(r.body), "at most every 1h", spec)
	}
	requireError(t, w.gw.do(t, http.MethodGet, pp, "", nil), 404, "not_found")
	// An hour or more apart, in Paris whatever its offset from UTC.
	for _, spec := range []string{"@every 1h", "@hourly", "0 */4 * * *", "0 3 * * *", "@daily", "0 3,5 * * 1", "0 3,4 * * *"} {
		r := w.gw.do(t, http.MethodPut, pp, "", wire.BackupPolicyRequest{Cron: spec, Timezone: "Europe/Paris", Retention: 1})
		require.Equal(t, http.StatusOK, r.status, "%s: %s", spec, r.body)
	}
	other := mustTenant(t, w.srv, "globex")
	requireError(t, w.gw.do(t, http.MethodPut, w.path(other, "/namespaces/orders/backup-policy"), "", wire.BackupPolicyRequest{Cron: "@daily", Retention: 1}), 404, "not_found")

	// No minimum: anything the cron grammar takes.
	w0 := backupSetup(t)
	w0.ns(t, w0.tid, "orders")
	r := w0.gw.do(t, http.MethodPut, w0.path(w0.tid, "/namespaces/orders/backup-policy"), "", wire.BackupPolicyRequest{Cron: "@every 1s", Retention: 1})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// TestBackupPolicyEveryZero: with no operator minimum, an "@every" that is
// not a whole number of seconds of at least one ("0s", which the cron
// library would run every second) is a 400 naming cron, and no policy is
// set.
func TestBackupPolicyEveryZero(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	pp := w.path(w.tid, "/namespaces/orders/backup-policy")
	for _, spec := range []string{"@every 0s", "@every 500ms", "@every -1s", "@every 1500ms"} {
		r := w.gw.do(t, http.MethodPut, pp, "", wire.BackupPolicyRequest{Cron: spec, Retention: 1})
		requireError(t, r, 400, "bad_request", "cron")
		require.Contains(t, string(r.body), "whole number of seconds", spec)
	}
	requireError(t, w.gw.do(t, http.MethodGet, pp, "", nil), 404, "not_found")
}
