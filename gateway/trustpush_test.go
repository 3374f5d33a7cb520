package gateway

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
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

// One tenant's self-hosted nodes that stall on every push (a tenant's own,
// on its own network) delay no other tenant's bundles: rounds are per
// tenant and a tenant's nodes are pushed to together, so tenant B's node
// gets its bundle, and a revocation after it, within a bound far below
// the six stalls of tenant A's nodes end to end (6 × 5 s), which the
// gateway this test began from made it wait out.
func TestStallingNodesDelayOnlyTheirTenantsTrustPush(t *testing.T) {
	t.Parallel()
	own, err := pki.NewCA("self-hosted shards")
	require.NoError(t, err)
	b := newBundle(t)
	b.control.Shards.Trust = map[string]wire.TrustBundle{}
	for _, sh := range []string{"sh_a1", "sh_a2", "sh_a3"} {
		b.control.Shards.SelfHosted = append(b.control.Shards.SelfHosted, wire.SelfHostedShard{ID: sh, TenantID: tenantA, Nodes: []string{"n1", "n2"}})
		b.control.Shards.Trust[sh] = bundleOf(t, b, tenantA, sh)
	}
	b.control.Shards.SelfHosted = append(b.control.Shards.SelfHosted, wire.SelfHostedShard{ID: "sh_b", TenantID: tenantB, Nodes: []string{"n1"}})
	b.control.Shards.Trust["sh_b"] = bundleOf(t, b, tenantB, "sh_b")
	b.start(t, func(c *Config) {
		c.TunnelAddr, c.SelfHostedCA = "127.0.0.1:0", own.CertPEM()
		c.TrustPushInterval = 200 * time.Millisecond
	})
	b.waitReady(t)
	unstall := make(chan struct{})
	t.Cleanup(func() { close(unstall) }) // before the gateway stops: cleanups run last first
	var stalled atomic.Int32
	for _, sh := range []string{"sh_a1", "sh_a2", "sh_a3"} {
		for _, n := range []string{"n1", "n2"} {
			a, fs := selfHostedNode(t, b, own, sh, n, tenantA)
			fs.setHandler(func(w http.ResponseWriter, r *http.Request) {
				stalled.Add(1)
				select { // until the gateway gives up on it, or the test ends
				case <-r.Context().Done():
				case <-unstall:
				}
			})
			waitState(t, a, "connected", func(st tunnel.AgentState) bool { return st.Connected })
		}
	}
	eventually(t, func() bool { return stalled.Load() > 0 }, "a push to tenant A stalling")

	const bound = 10 * time.Second // a push to B, under load; A's round takes 30 s one node at a time
	a, fs := selfHostedNode(t, b, own, "sh_b", "n1", tenantB)
	fs.setHandler(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	waitState(t, a, "connected", func(st tunnel.AgentState) bool { return st.Connected })
	withinBound(t, bound, func() bool { return len(trustPushes(t, fs)) > 0 }, "tenant B's node pushed its bundle on connecting")

	b.control.Lock()
	b.control.Shards.Trust["sh_b"] = bundleOf(t, b, tenantB, "sh_b", "key_gone")
	b.control.Unlock()
	withinBound(t, bound, func() bool {
		p := trustPushes(t, fs)
		return len(p[len(p)-1].Revocations.Revoked) == 1
	}, "tenant B's revocation pushed")
	// A's nodes were pushed to together, not one after another.
	withinBound(t, bound, func() bool { return stalled.Load() >= 6 }, "every node of tenant A pushed to")
}

// bundleOf is a trust bundle of tenant's shard.
func bundleOf(t *testing.T, b *bundle, tenant, shard string, revoked ...string) wire.TrustBundle {
	tb := trustBundle(t, b.signer, revoked...)
	tb.TenantID, tb.ShardID = tenant, shard
	return tb
}

// withinBound waits for cond, polling, and fails the test if it does not hold
// within bound: a bound the code must meet, set far from what it is
// measured against.
func withinBound(t *testing.T, bound time.Duration, cond func() bool, what string) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > bound {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%s in %s", what, time.Since(start).Round(time.Millisecond))
}
