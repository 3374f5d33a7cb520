package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// A self-hosted node's own listener is for its own cluster's nodes: the
// hosted roles' certificates (gateway, operator, control, metrics), which
// cannot be revoked, are refused at its TLS handshake, as are nodes of
// the same shard id that are hosted or another tenant's; its members are
// admitted and do what members do there (join, membership, forwarding).
// The hosted gateway reaches it over its tunnel, the tenant's local API
// over its Unix socket.
func TestSelfHostedListenerAdmitsOnlyItsOwnCluster(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "s.sock")
	// Two nodes of pkitest.Tenant's shard s1: n2 joined through n1's
	// listener, as a member.
	g := newShardGroup(t, 2, func(c *Config) {
		c.TLS = testCA(t).Creds(t, pkitest.TenantShard("s1", c.NodeID, pkitest.Tenant))
		if c.NodeID == "n1" {
			c.SocketPath = sock
		}
	})
	leader, follower := g.leaderAndFollower()
	const otherTenant = "t_zzzzzzzzzzzzzzzzzzzzzzzzzz"
	refused := []pki.Identity{pkitest.Gateway, pkitest.Operator, pkitest.Control, pkitest.Metrics,
		pkitest.Shard("s1", "n3"), pkitest.TenantShard("s1", "n3", otherTenant), pkitest.TenantShard("s2", "n1", pkitest.Tenant)}
	var admitted []string
	for _, b := range []*bundle{leader, follower} {
		for _, id := range refused {
			for _, path := range []string{"/api/v1/queues", "/internal/v1/members", "/metrics", "/internal/v1/usage"} {
				req, err := http.NewRequest("GET", b.url+path, nil)
				require.NoError(t, err)
				req.Header.Set(wire.ShardNamespaceHeader, testNS)
				res, err := client(t, id, nil).Do(req)
				if err == nil {
					res.Body.Close()
					admitted = append(admitted, fmt.Sprintf("%s: %s %s %d", b.srv.cfg.NodeID, id, path, res.StatusCode))
					continue
				}
				require.ErrorContains(t, err, "tls: bad certificate", "%s is refused at the handshake", id)
			}
		}
	}
	require.Empty(t, admitted, "callers a self-hosted node's listener admitted")

	// Its members are admitted: the membership, and jobs (a follower
	// forwarding a write presents its own certificate).
	member := leader.as(pkitest.TenantShard("s1", "n2", pkitest.Tenant))
	r := member.call("GET", "/internal/v1/members", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var members wire.MemberList
	require.NoError(t, json.Unmarshal(r.Raw, &members))
	require.Len(t, members.Members, 2, string(r.Raw))
	// (Retried while the group has no leader: on a loaded machine an
	// election may run here.)
	r = retry(t, member, "POST", "/api/v1/enqueue", map[string]any{"queue": "q"})
	created(t, r)

	// The hosted gateway, over the follower's tunnel: a write the
	// follower forwards to its leader over the leader's listener, a read,
	// a health check.
	gw := overTunnel(t, follower)
	r = retry(t, gw, "POST", "/api/v1/enqueue", map[string]any{"queue": "q"})
	created(t, r)
	id := r.Body["job_id"].(string)
	require.Equal(t, "pending", gw.job(id)["state"], "read your write through the same follower")
	require.Equal(t, 200, gw.call("GET", "/healthz", nil).Status)
	// Still judged by its route: the gateway is not a member.
	require.Equal(t, 403, gw.call("GET", "/internal/v1/members", nil).Status)

	// The tenant's local API, over the leader's Unix socket.
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	local := *leader
	local.client, local.url = &http.Client{Transport: tr, Timeout: 30 * time.Second}, "http://localhost"
	r = retry(t, &local, "POST", "/api/v1/enqueue", map[string]any{"queue": "q"})
	created(t, r)
	require.Equal(t, id, local.job(id)["id"])
}
