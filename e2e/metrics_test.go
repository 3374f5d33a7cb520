package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every process serves /metrics to the operator's scraper (cluster secret)
// and to nobody else: metrics carry namespace labels.
func TestMetricsAreForTheOperatorOnly(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(shared.dir, "cluster.secret"))
	require.NoError(t, err)
	secret := strings.TrimSpace(string(raw))
	_, ct := shared.tenant(t)
	for _, base := range []string{shared.gateway, shared.control, shared.shard} {
		require.Equal(t, 401, call(t, "GET", base+"/metrics", "", nil).Status, base)
		require.Equal(t, 401, call(t, "GET", base+"/metrics", ct.OwnerKey, nil).Status, base)
		r := call(t, "GET", base+"/metrics", secret, nil)
		require.Equal(t, 200, r.Status, base)
		require.Contains(t, string(r.Raw), `jobbie_raft_leader{group="shard s1"} 1`)
		require.Contains(t, string(r.Raw), `jobbie_raft_leader{group="control"} 1`)
		require.Contains(t, string(r.Raw), "jobbie_raft_apply_seconds_bucket")
	}
}
