package gateway

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/selfhosted"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/wire"
)

// trustPushes are the bundles a fake node was pushed, in order.
func trustPushes(t *testing.T, fs *fakeShard) []wire.TrustBundle {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []wire.TrustBundle
	for _, r := range fs.seen {
		if r.Method+" "+r.URI != "POST "+selfhosted.TrustPushPath {
			continue
		}
		require.Equal(t, pkitest.Gateway, r.Peer, "pushed by the gateway, through the tunnel")
		var b wire.TrustBundle
		require.NoError(t, json.Unmarshal([]byte(r.Body), &b))
		out = append(out, b)
	}
	return out
}

// A gateway pushes each connected self-hosted node its shard's trust
// bundle from control when it connects and every TrustPushInterval, so a
// change in control reaches the node within about that; while control
// has no bundle to give, nothing is pushed (never an old one).
func TestTrustBundlesArePushedToConnectedNodes(t *testing.T) {
	t.Parallel()
	own, err := pki.NewCA("self-hosted shards")
	require.NoError(t, err)
	b := newBundle(t)
	b.control.Shards.SelfHosted = []wire.SelfHostedShard{{ID: "sh_a", TenantID: tenantA, Nodes: []string{"n1"}}}
	first := trustBundle(t, b.signer)
	b.control.Shards.Trust = map[string]wire.TrustBundle{"sh_a": first}
	b.start(t, func(c *Config) {
		c.TunnelAddr, c.SelfHostedCA = "127.0.0.1:0", own.CertPEM()
		c.TrustPushInterval = 200 * time.Millisecond
	})
	b.waitReady(t)
	a, fs := selfHostedNode(t, b, own, "sh_a", "n1", tenantA)
	fs.setHandler(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	waitState(t, a, "connected", func(st tunnel.AgentState) bool { return st.Connected })
	eventually(t, func() bool { return len(trustPushes(t, fs)) > 0 }, "a push on connecting")
	require.Equal(t, first.Revocations, trustPushes(t, fs)[0].Revocations)

	b.control.Lock()
	b.control.Shards.Trust["sh_a"] = trustBundle(t, b.signer, "key_gone")
	b.control.Unlock()
	eventually(t, func() bool {
		p := trustPushes(t, fs)
		return len(p[len(p)-1].Revocations.Revoked) == 1
	}, "the revocation pushed within an interval")

	// Control has none to give (down, or the shard gone from it): no push.
	// Rounds run one after another, so once control was asked twice more,
	// a push begun before the change has landed.
	asked := func() int {
		b.control.Lock()
		defer b.control.Unlock()
		return b.control.Shards.TrustAsked
	}
	b.control.Lock()
	delete(b.control.Shards.Trust, "sh_a")
	b.control.Unlock()
	since := asked()
	eventually(t, func() bool { return asked() >= since+2 }, "control asked again")
	n := len(trustPushes(t, fs))
	since = asked()
	eventually(t, func() bool { return asked() >= since+3 }, "control asked again")
	require.Equal(t, n, len(trustPushes(t, fs)), "nothing pushed without a bundle from control")
}
