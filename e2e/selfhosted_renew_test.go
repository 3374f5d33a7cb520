package e2e

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
)

// A self-hosted node renews its certificate itself, at control, before
// it expires: with control issuing 20-second certificates, node.crt's
// expiry moves forward again and again, each time with about a third of
// the lifetime left; the tunnel made with the first certificate stays
// up past its expiry and carries a job end to end; and when the hosted
// side restarts, the node reconnects with the renewed certificate,
// swapped in without a restart of its own.
func TestSelfHostedNodeRenewsItsCertificate(t *testing.T) {
	t.Parallel()
	const validity = 20 * time.Second
	dir := t.TempDir()
	ports, err := freeport.Loopback(8)
	require.NoError(t, err)
	devCfg := hostedConfig(dir, ports, "--selfhosted-cert-validity", validity.String())
	hosted, err := startDev(devCfg)
	require.NoError(t, err)
	t.Cleanup(func() { hosted.stop() })
	a, ta := hosted.tenant(t)
	tok, err := a.CreateJoinToken(ctx(t), "dc1", 10*time.Minute, 1)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	data := filepath.Join(dir, "selfhosted-n1")
	node := startProcess(t, filepath.Join(dir, "selfhosted-n1.log"), selfHostedArgs(hosted, dir, ports, 0, "n1", gk, tok.Token)...)
	certFile := filepath.Join(data, "selfhosted", "node.crt")
	eventually(t, 30*time.Second, func() bool { return node.Count("serving https://") > 0 }, "the self-hosted node serves")
	first := notAfter(t, certFile)
	require.WithinDuration(t, time.Now().Add(validity), first, 5*time.Second, "the joined certificate lasts the configured validity")
	connected := func() bool {
		shards, err := a.Shards(ctx(t))
		require.NoError(t, err)
		return len(shards) == 1 && len(shards[0].Connected) == 1
	}
	eventually(t, 30*time.Second, connected, "the node's tunnel is up")
	// (Before the gateway learns that the node joined, it refuses it.)
	downs, ups := node.Count("tunnel: down"), node.Count("tunnel: connected")
	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	onprem := client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))

	// Watch node.crt: each renewal moves its expiry forward, before the
	// one it replaces expires.
	expiries := []time.Time{first}
	watch := func(n int, within time.Duration) {
		t.Helper()
		eventually(t, within, func() bool {
			got := notAfter(t, certFile)
			if last := expiries[len(expiries)-1]; got.After(last) {
				left := time.Until(last)
				require.Positive(t, left, "renewed before the certificate it replaces expired")
				t.Logf("renewal %d: expiry %s → %s, with %s of %s left", len(expiries), last.Format(time.TimeOnly), got.Format(time.TimeOnly),
					left.Round(100*time.Millisecond), validity)
				expiries = append(expiries, got)
			}
			return len(expiries) > n
		}, "node.crt renewed")
	}
	watch(2, 3*validity)
	// (node.crt is written just before the node swaps it in and says so.)
	eventually(t, 5*time.Second, func() bool { return node.Count("certificate renewed") == 2 }, "the node swapped both in")

	// Past the first certificate's expiry: the tunnel it opened is still
	// up, never dropped, and carries a job end to end.
	time.Sleep(time.Until(first.Add(time.Second)))
	require.True(t, connected(), "the tunnel is up past the first certificate's expiry")
	require.Equal(t, downs, node.Count("tunnel: down"), "the tunnel never dropped: %s", node.LogTail(20))
	served := func(queue string) {
		t.Helper()
		var res *client.EnqueueResult
		eventually(t, 30*time.Second, func() bool {
			res, err = onprem.Enqueue(ctx(t), client.EnqueueRequest{Queue: queue, Payload: map[string]string{"after": "expiry"}})
			return err == nil
		}, "an enqueue through the hosted gateway")
		j, err := onprem.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, WorkerID: "w1", Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		require.Equal(t, res.JobID, j.ID)
		require.NoError(t, onprem.Ack(ctx(t), j.ID, map[string]bool{"ok": true}))
		d, err := onprem.GetJob(ctx(t), j.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", d.State)
	}
	served("after-expiry")

	// Right after a renewal (the most time left), the hosted side
	// restarts: the node dials again, and only the renewed certificate,
	// swapped in place, gets it admitted.
	watch(3, 3*validity)
	hosted.kill()
	hosted, err = startDev(devCfg)
	require.NoError(t, err)
	eventually(t, 30*time.Second, func() bool { return node.Count("tunnel: connected") > ups }, "the tunnel reconnects")
	require.True(t, time.Now().After(first), "the first certificate has expired")
	onprem = client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))
	served("after-restart")
	watch(4, 3*validity)
}

// notAfter is when the PEM certificate in file expires.
func notAfter(t *testing.T, file string) time.Time {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	blk, _ := pem.Decode(b)
	require.NotNil(t, blk, "%s holds no PEM block", file)
	c, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	return c.NotAfter
}
