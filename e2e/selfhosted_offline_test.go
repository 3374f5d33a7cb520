package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A self-hosted node's local API serves the tenant's workers in its own
// network, judging keys by the trust bundle the hosted gateway pushes
// over the tunnel: with the hosted side (control and gateway) killed,
// workers go on enqueueing, fetching and acknowledging there until the
// bundle is older than --local-api-max-offline, then every key is
// refused with revocations_stale; when the hosted side is back, the
// local API serves again and what was done offline is visible through
// the hosted gateway. A key revoked while the hosted side is up stops
// working at the local API within the push interval; another tenant's
// key, RBAC and tenant administration are the gateway's rules there too.
func TestSelfHostedShardWorksOffline(t *testing.T) {
	t.Parallel()
	const (
		pushEvery  = 300 * time.Millisecond
		maxOffline = 6 * time.Second
	)
	dir := t.TempDir()
	ports, err := freeport.Loopback(8)
	require.NoError(t, err)
	devCfg := hostedConfig(dir, ports, "--trust-push-interval", pushEvery.String())
	hosted, err := startDev(devCfg)
	require.NoError(t, err)
	t.Cleanup(func() { hosted.stop() })
	a, ta := hosted.tenant(t)
	_, tb := hosted.tenant(t)

	tok, err := a.CreateJoinToken(ctx(t), "dc1", 10*time.Minute, 1)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	localAddr := other(ports[7])
	node := startProcess(t, filepath.Join(dir, "selfhosted-n1.log"), append(selfHostedArgs(hosted, dir, ports, 0, "n1", gk, tok.Token),
		"--local-api", localAddr, "--local-api-max-offline", maxOffline.String())...)
	eventually(t, 30*time.Second, func() bool { return node.Count("local API serving") > 0 }, "the node serves its local API")
	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	key := func(name string, role tenancy.Role) string {
		k, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: name, Role: role, Namespaces: []string{"onprem"}})
		require.NoError(t, err)
		return k.Token
	}
	local := func(token string) *client.Client {
		return client.New("http://"+localAddr, token, client.WithNamespace("onprem"))
	}
	producer, worker := local(key("producer", tenancy.RoleProducer)), local(key("worker", tenancy.RoleWorker))
	doomedKey, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: "doomed", Role: tenancy.RoleProducer, Namespaces: []string{"onprem"}})
	require.NoError(t, err)
	doomed := local(doomedKey.Token)
	enqueue := func(c *client.Client, n int) error {
		_, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "local", Payload: map[string]int{"n": n}})
		return err
	}
	eventually(t, 30*time.Second, func() bool { return enqueue(producer, 0) == nil }, "the local API serves once a bundle naming onprem came")
	require.NoError(t, enqueue(doomed, 0))

	// The gateway's rules, at the local API: RBAC, another tenant, and
	// what only the hosted gateway serves.
	require.True(t, client.IsForbidden(enqueue(worker, 0)), "a worker key may not enqueue")
	_, err = client.New("http://"+localAddr, tb.OwnerKey, client.WithNamespace("onprem")).Enqueue(ctx(t), client.EnqueueRequest{Queue: "local"})
	require.True(t, client.IsNotFound(err), "another tenant's key: %v", err)
	_, err = client.New("http://"+localAddr, tb.OwnerKey).Enqueue(ctx(t), client.EnqueueRequest{Queue: "local"})
	require.True(t, client.IsNotFound(err), "another tenant's own namespace is not here: %v", err)
	_, err = local(ta.OwnerKey).ListKeys(ctx(t))
	require.True(t, client.IsNotFound(err), "tenant administration is the hosted gateway's: %v", err)

	// A key revoked through the hosted gateway stops working here within
	// about a push.
	require.NoError(t, a.DeleteKey(ctx(t), doomedKey.ID))
	revoked := time.Now()
	eventually(t, 10*time.Second, func() bool { return client.IsUnauthenticated(enqueue(doomed, 1)) }, "the revoked key refused at the local API")
	t.Logf("a revocation reached the local API in %s (push interval %s)", time.Since(revoked).Round(time.Millisecond), pushEvery)

	// The hosted side goes away: control, gateway and the hosted shard.
	hosted.kill()
	gone := time.Now()
	const jobs = 50
	for i := range jobs {
		require.NoError(t, enqueue(producer, i+1), "enqueue %d with the hosted side down", i)
	}
	var done []string
	for len(done) < jobs+1 {
		j, err := worker.Fetch(ctx(t), client.FetchRequest{Queues: []string{"local"}, WorkerID: "w1", Timeout: 2 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j, "a job for the worker after %d", len(done))
		require.NoError(t, worker.Ack(ctx(t), j.ID, map[string]bool{"offline": true}))
		done = append(done, j.ID)
	}
	worked := time.Since(gone)
	require.Less(t, worked, maxOffline, "the offline work ends within the bound; else the bound is too short for this machine")
	require.True(t, client.IsUnauthenticated(enqueue(doomed, 2)), "still revoked offline")

	// Past the bound: every key refused, saying why.
	var staleErr error
	eventually(t, maxOffline+10*time.Second, func() bool {
		staleErr = enqueue(producer, -1)
		return staleErr != nil
	}, "keys refused once the bundle is older than the bound")
	refusedAfter := time.Since(gone)
	require.Equal(t, string(wire.CodeRevocationsStale), client.ErrorCode(staleErr), "%v", staleErr)
	require.Contains(t, staleErr.Error(), "has not heard from the hosted service")
	// Counted from the kill, not from the last bundle (which came up to a
	// push round earlier, longer on a loaded machine).
	require.GreaterOrEqual(t, refusedAfter, maxOffline/2, "not refused long before the bound")
	t.Logf("%d jobs enqueued and %d worked offline in %s; keys refused %s after the hosted side went (bound %s)",
		jobs, len(done), worked.Round(time.Millisecond), refusedAfter.Round(time.Millisecond), maxOffline)
	_, err = worker.Fetch(ctx(t), client.FetchRequest{Queues: []string{"local"}, WorkerID: "w1"})
	require.Equal(t, string(wire.CodeRevocationsStale), client.ErrorCode(err), "%v", err)

	// The hosted side back: the tunnel brings a bundle, the local API
	// serves again, and the work done offline is there through the
	// hosted gateway.
	hosted, err = startDev(devCfg)
	require.NoError(t, err)
	eventually(t, 60*time.Second, func() bool { return enqueue(producer, jobs+1) == nil }, "the local API serves again")
	through := client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))
	for _, id := range done {
		d, err := through.GetJob(ctx(t), id)
		require.NoError(t, err, id)
		require.Equal(t, "completed", d.State, fmt.Sprintf("job %s", id))
	}
}
