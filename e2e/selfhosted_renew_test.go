package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/wire"
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
	devCfg := devproc.Config{Dir: filepath.Join(dir, "hosted"), Log: filepath.Join(dir, "dev.log"),
		Addr: ports[0], ControlAddr: ports[1], ShardAddr: ports[2], TunnelAddr: ports[3],
		Flags: []string{"--selfhosted-cert-validity", validity.String()}}
	hosted, err := startDev(devCfg)
	require.NoError(t, err)
	t.Cleanup(func() { hosted.stop() })
	a, ta := hosted.tenant(t)
	tok, err := a.CreateJoinToken(ctx(t), "dc1", 10*time.Minute, 1)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	data := filepath.Join(dir, "selfhosted-n1")
	node := startProcess(t, filepath.Join(dir, "selfhosted-n1.log"), "shard", "--node-id", "n1", "--data-dir", data, "--bootstrap",
		"--http", other(ports[4]), "--raft", other(ports[5]), "--gossip", other(ports[6]), "--gossip-key-file", gk,
		"--join-token", tok.Token, "--control-url", hosted.control, "--ca-file", filepath.Join(hosted.dir, "pki", "ca.crt"))
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

// A self-hosted node lost with its volume is replaced: the owner removes
// it from control's list of the shard's nodes and mints a token for one
// more node of the same shard (control's internal routes, called here
// with a gateway's certificate, as the gateway calls them), and the
// replacement joins the shard's Raft group under a new id, tunnels to the
// gateway and serves the namespace with what the group held.
func TestSelfHostedNodeReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ports, err := freeport.Loopback(16)
	require.NoError(t, err)
	hosted := startHosted(t, dir, ports)
	a, ta := hosted.tenant(t)
	tok, err := a.CreateJoinToken(ctx(t), "dc3", 10*time.Minute, 3)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	procs := map[string]*devproc.Proc{}
	start := func(i int, id, token string) {
		p := ports[4+3*i:]
		args := []string{"shard", "--node-id", id, "--data-dir", filepath.Join(dir, "selfhosted-"+id),
			"--http", other(p[0]), "--raft", other(p[1]), "--gossip", other(p[2]), "--gossip-key-file", gk,
			"--join-token", token, "--control-url", hosted.control, "--ca-file", filepath.Join(hosted.dir, "pki", "ca.crt")}
		if i == 0 {
			args = append(args, "--bootstrap")
		} else {
			args = append(args, "--join", other(ports[6]), "--join-http", other(ports[4]))
		}
		procs[id] = startProcess(t, filepath.Join(dir, "selfhosted-"+id+".log"), args...)
		eventually(t, 60*time.Second, func() bool { return procs[id].Count("serving https://") > 0 }, id+" serves")
	}
	for i, id := range []string{"n1", "n2", "n3"} {
		start(i, id, tok.Token)
	}
	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	onprem := client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))
	var first *client.EnqueueResult
	eventually(t, 60*time.Second, func() bool {
		first, err = onprem.Enqueue(ctx(t), client.EnqueueRequest{Queue: "q", Payload: map[string]int{"n": 1}})
		return err == nil
	}, "an enqueue through the tunnels")

	// n3 is lost, volume and all.
	require.NoError(t, procs["n3"].Cmd.Process.Kill())
	<-procs["n3"].Exited()
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "selfhosted-n3")))

	gw := (&testPKI{dir: filepath.Join(hosted.dir, "pki")}).client(t, "gateway", "", "e2e")
	shard := hosted.control + "/internal/v1/tenants/" + ta.Tenant.ID + "/shards/" + tok.ShardID
	call := func(method, url, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx(t), method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := gw.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, url, b)
		return b
	}
	call(http.MethodDelete, shard+"/nodes/n3", "", http.StatusNoContent)
	var more wire.JoinToken
	require.NoError(t, json.Unmarshal(call(http.MethodPost, shard+"/join-tokens", `{"nodes":1,"expires_in":"10m"}`, http.StatusCreated), &more))
	require.Equal(t, tok.ShardID, more.ShardID)

	start(3, "n4", more.Token)
	eventually(t, 60*time.Second, func() bool {
		shards, err := a.Shards(ctx(t))
		require.NoError(t, err)
		return len(shards) == 1 && len(shards[0].Connected) == 3
	}, "three tunnels up again")
	shards, err := a.Shards(ctx(t))
	require.NoError(t, err)
	require.Equal(t, []string{"n1", "n2", "n4"}, shards[0].Nodes)
	require.Equal(t, 3, shards[0].ExpectedNodes)

	// The tenant takes n3 out of its Raft group, as a member may (with
	// n1's own certificate, at n1's listener); then the replacement
	// holds the group's data and serves through its tunnel: with n1 gone
	// too, n2 and n4 are the group's quorum.
	n1 := memberClient(t, filepath.Join(dir, "selfhosted-n1", "selfhosted"))
	eventually(t, 30*time.Second, func() bool {
		req, err := http.NewRequestWithContext(ctx(t), http.MethodDelete, "https://"+other(ports[4])+"/internal/v1/members/n3", nil)
		require.NoError(t, err)
		resp, err := n1.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode/100 == 2
	}, "n3 removed from the shard's Raft group")
	require.NoError(t, procs["n1"].Cmd.Process.Kill())
	<-procs["n1"].Exited()
	var j *client.Job
	eventually(t, 60*time.Second, func() bool {
		j, err = onprem.Fetch(ctx(t), client.FetchRequest{Queues: []string{"q"}, WorkerID: "w1", Timeout: time.Second})
		return err == nil && j != nil
	}, "the job enqueued before the loss, fetched through n2 and n4")
	require.Equal(t, first.JobID, j.ID)
	require.NoError(t, onprem.Ack(ctx(t), j.ID, nil))
}

// memberClient is an HTTPS client with a self-hosted node's own
// certificate (dir holds node.crt, node.key, ca.crt), which its cluster's
// members admit; peers are checked against ca.crt by identity, not host
// (self-hosted certificates name none).
func memberClient(t *testing.T, dir string) *http.Client {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key"))
	require.NoError(t, err)
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			leaf, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			_, err = leaf.Verify(x509.VerifyOptions{Roots: roots})
			return err
		}}
	return tlsClient(t, cfg, 20*time.Second)
}
