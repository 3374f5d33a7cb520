package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// localHandler is the command `jobbie worker` runs in
// TestSubprocessWorkerAtTheLocalAPI, chosen by the payload's "mode":
// ack prints a JSON result from its environment, flaky fails its first
// attempt, permanent fails for good (exit 75), progress reports progress
// and a checkpoint on fd 3 and acks once $HANDLER_DIR/<job>.go exists,
// hang starts a grandchild and waits. Each writes its pid to $HANDLER_DIR/<job>.pid, and hang its
// grandchild's to <job>.grandpid.
const localHandler = `#!/bin/sh
set -u
d=$HANDLER_DIR
id=$JOBBIE_JOB_ID
echo $$ > "$d/$id.pid.tmp" && mv "$d/$id.pid.tmp" "$d/$id.pid"
mode=$(sed -n 's/.*"mode" *: *"\([a-z]*\)".*/\1/p')
case $mode in
ack)
	printf '{"id":"%s","queue":"%s","attempt":%s}\n' "$JOBBIE_JOB_ID" "$JOBBIE_QUEUE" "$JOBBIE_ATTEMPT" ;;
flaky)
	if [ "$JOBBIE_ATTEMPT" -lt 2 ]; then
		echo "flaky failure on attempt $JOBBIE_ATTEMPT" >&2
		exit 3
	fi
	echo '{"recovered":true}' ;;
permanent)
	echo "bad input: no such customer" >&2
	exit 75 ;;
progress)
	echo '{"progress":{"current":3,"total":10,"message":"three of ten"}}' >&3
	echo '{"checkpoint":{"step":3}}' >&3
	while [ ! -e "$d/$id.go" ]; do sleep 0.05; done
	echo '{"done":true}' ;;
hang)
	sleep 600 &
	echo $! > "$d/$id.grandpid.tmp" && mv "$d/$id.grandpid.tmp" "$d/$id.grandpid"
	wait ;;
*)
	echo "unknown mode $mode" >&2
	exit 75 ;;
esac
`

// `jobbie worker` against a self-hosted node's local API, the way a
// tenant's workers in its own network use it: the node joined with a
// token and serving its local API, the worker given the local API's URL
// and a worker key. Jobs enqueued there are acked with the command's
// output, failed and retried, failed for good, report progress and a
// checkpoint, and are cancelled while they run (the command and its child
// killed); `jobbie workers drain` at the local API stops the worker once
// its running job is done, with no job lost. The hosted side (control
// and gateway) is killed before the worker starts: all of it works
// offline.
func TestSubprocessWorkerAtTheLocalAPI(t *testing.T) {
	t.Parallel()
	sh := startLocalAPIShard(t, 1, false)
	workAtLocalAPI(t, sh, sh.local["n1"], true)
}

// The same at a local API serving HTTPS with a certificate of the
// tenant's own CA: the worker and `jobbie workers drain` run from a
// context `jobbie login --ca-file` saved, with no connection flags.
func TestSubprocessWorkerAtATLSLocalAPI(t *testing.T) {
	t.Parallel()
	sh := startLocalAPIShard(t, 1, true)
	workAtLocalAPI(t, sh, sh.local["n1"], false)
}

// The same at a follower's local API in a three-node self-hosted shard:
// the follower hands the worker's calls to its leader. The cluster's
// health there names every node with its replication figures.
func TestSubprocessWorkerAtAFollowersLocalAPI(t *testing.T) {
	t.Parallel()
	sh := startLocalAPIShard(t, 3, false)
	var follower string
	eventually(t, 60*time.Second, func() bool {
		h, err := sh.client(sh.local["n1"], sh.dev).ClusterHealth(ctx(t))
		if err != nil || !h.Healthy || len(h.Nodes) != 3 {
			return false
		}
		for _, n := range h.Nodes {
			if n.AppliedIndex == nil || n.Lag == nil || n.Status != wire.NodeHealthy {
				return false
			}
			if follower == "" && n.ID != h.LeaderID {
				follower = n.ID
			}
		}
		return follower != ""
	}, "the local API's cluster health: three healthy nodes, each with its applied index and lag")
	workAtLocalAPI(t, sh, sh.local[follower], false)

	// Another tenant's key: the worker stops at its first fetch, saying
	// why, and the queue's jobs stay where they are.
	_, tb := sh.hosted.tenant(t)
	left, err := sh.client(sh.local[follower], sh.dev).Enqueue(ctx(t), client.EnqueueRequest{Queue: "local", Payload: json.RawMessage(`{"mode":"ack"}`)})
	require.NoError(t, err)
	r := jobbie(t, cliEnv(""), nil, "worker", "--url", sh.local[follower], "--key", tb.OwnerKey, "--namespace", "onprem",
		"--queue", "local", "--", "true")
	requireFails(t, r, "another tenant's key at the local API", "404", `namespace "onprem" not found`)
	j, err := sh.client(sh.local[follower], sh.dev).GetJob(ctx(t), left.JobID)
	require.NoError(t, err)
	require.Equal(t, wire.StatePending, j.State)
}

// localAPIShard is a jobbie dev and a self-hosted shard of its tenant
// whose nodes serve local APIs, with the namespace onprem on it.
type localAPIShard struct {
	a     *client.Client            // the tenant's owner at the hosted gateway
	local map[string]string         // each node's local API URL
	dev   string                    // a developer key of onprem
	keys  func(tenancy.Role) string // a new key of onprem
	ca    string                    // the CA file of the local APIs' certificates, when they serve HTTPS
	// hosted is the jobbie dev the shard joined.
	hosted *devServer
}

func (sh *localAPIShard) client(url, key string) *client.Client {
	opts := []client.Option{client.WithNamespace("onprem")}
	if sh.ca != "" {
		pool := x509.NewCertPool()
		pem, err := os.ReadFile(sh.ca)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			panic(fmt.Sprintf("the local API's CA %s: %v", sh.ca, err))
		}
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}))
	}
	return client.New(url, key, opts...)
}

// startLocalAPIShard starts a shard of size nodes (n1, n2 …) and waits
// until every node's local API serves onprem; withTLS, over HTTPS with a
// certificate of a CA of the tenant's (sh.ca).
func startLocalAPIShard(t *testing.T, size int, withTLS bool) *localAPIShard {
	t.Helper()
	dir := t.TempDir()
	var tenantCA *testPKI
	if withTLS {
		tenantCA = newTestPKI(t)
	}
	ports, err := freeport.Loopback(4 + 4*size)
	require.NoError(t, err)
	hosted, err := startDev(hostedConfig(dir, ports, "--trust-push-interval", "500ms"))
	require.NoError(t, err)
	t.Cleanup(hosted.stop)
	a, _ := hosted.tenant(t)
	tok, err := a.CreateJoinToken(ctx(t), "dc1", 10*time.Minute, size)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	sh := &localAPIShard{a: a, local: map[string]string{}, hosted: hosted}
	for i := range size {
		id := fmt.Sprintf("n%d", i+1)
		addr := other(ports[4+3*size+i])
		args := append(selfHostedArgs(hosted, dir, ports, i, id, gk, tok.Token), "--local-api", addr)
		sh.local[id] = "http://" + addr
		if withTLS {
			out := filepath.Join(tenantCA.dir, "local-"+id)
			b, err := exec.Command(binary, "certs", "issue", "--ca-dir", tenantCA.dir, "--role", "gateway", "--node", "local-"+id,
				"--host", "127.0.0.2", "--out", out).CombinedOutput()
			require.NoError(t, err, "%s", b)
			args = append(args, "--local-api-tls-cert", out+".crt", "--local-api-tls-key", out+".key")
			sh.local[id], sh.ca = "https://"+addr, tenantCA.caFile()
		}
		node := startProcess(t, filepath.Join(dir, "selfhosted-"+id+".log"), args...)
		eventually(t, 60*time.Second, func() bool { return node.Count("local API serving") > 0 }, id+" serves its local API")
	}
	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	n := 0
	sh.keys = func(role tenancy.Role) string {
		n++
		k, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: fmt.Sprintf("%s-%d", role, n), Role: role, Namespaces: []string{"onprem"}})
		require.NoError(t, err)
		return k.Token
	}
	sh.dev = sh.keys(tenancy.RoleDeveloper)
	for id, url := range sh.local {
		eventually(t, 60*time.Second, func() bool {
			_, err := sh.client(url, sh.dev).ListQueues(ctx(t))
			return err == nil
		}, id+"'s local API serves once a bundle naming onprem came")
	}
	return sh
}

// workAtLocalAPI runs `jobbie worker` against localURL and works jobs
// of every outcome there (TestSubprocessWorkerAtTheLocalAPI); offline,
// with the hosted side killed first.
func workAtLocalAPI(t *testing.T, sh *localAPIShard, localURL string, offline bool) {
	dev := sh.client(localURL, sh.dev)
	workerKey, adminKey := sh.keys(tenancy.RoleWorker), sh.keys(tenancy.RoleAdmin)
	if offline {
		sh.hosted.kill()
	}
	hdir := t.TempDir()
	handler := filepath.Join(hdir, "handler.sh")
	require.NoError(t, os.WriteFile(handler, []byte(localHandler), 0o755))
	enqueue := func(mode string) string {
		t.Helper()
		two := 2
		res, err := dev.Enqueue(ctx(t), client.EnqueueRequest{Queue: "local", Payload: json.RawMessage(`{"mode":"` + mode + `"}`),
			MaxRetries: &two, RetryBackoff: client.BackoffNone})
		require.NoError(t, err)
		return res.JobID
	}
	settle := func(id string) *client.JobDetail {
		t.Helper()
		var j *client.JobDetail
		eventually(t, 2*time.Minute, func() bool {
			var err error
			j, err = dev.GetJob(ctx(t), id)
			require.NoError(t, err)
			return j.State == wire.StateCompleted || j.State == wire.StateDead || j.State == wire.StateCancelled
		}, "job "+id+" settles")
		return j
	}

	// Plain HTTP: the connection flags. HTTPS with the tenant's CA: a
	// context saved by jobbie login --ca-file (the gateway's commands
	// take a CA from a context only).
	env := cliEnv("", "JOBBIE_URL=", "XDG_CONFIG_HOME="+t.TempDir())
	conn := []string{"--url", localURL, "--key", workerKey, "--namespace", "onprem"}
	adminConn := []string{"--url", localURL, "--key", adminKey, "--namespace", "onprem"}
	if sh.ca != "" {
		for name, c := range map[string][]string{"worker": conn, "admin": adminConn} {
			requireOK(t, jobbie(t, env, nil, append([]string{"login", "--name", name, "--ca-file", sh.ca}, c...)...), "login "+name)
		}
		conn, adminConn = []string{"--context", "worker"}, []string{"--context", "admin"}
	}
	w := startCLIWorker(t, filepath.Join(hdir, "worker.log"), env, hdir, append(append([]string{"worker"}, conn...),
		"--queue", "local", "--concurrency", "4", "--", handler)...)
	ack, flaky, permanent, hang := enqueue("ack"), enqueue("flaky"), enqueue("permanent"), enqueue("hang")
	progress := enqueue("progress")

	j := settle(ack)
	require.Equal(t, wire.StateCompleted, j.State, "%+v", j)
	require.JSONEq(t, fmt.Sprintf(`{"id":%q,"queue":"local","attempt":1}`, ack), string(j.Result))

	j = settle(flaky)
	require.Equal(t, wire.StateCompleted, j.State, "%+v", j)
	require.Equal(t, 2, j.Attempt)
	require.JSONEq(t, `{"recovered":true}`, string(j.Result))
	require.Len(t, j.Errors, 1)
	require.Contains(t, j.Errors[0].Error, "flaky failure on attempt 1")

	j = settle(permanent)
	require.Equal(t, wire.StateDead, j.State, "%+v", j)
	require.Equal(t, wire.ReasonNonRetryable, j.DeadReason)
	require.Equal(t, 1, j.Attempt)
	require.Contains(t, j.Errors[0].Error, "bad input: no such customer")

	pid, grand := readPidFile(t, hdir, hang+".pid"), readPidFile(t, hdir, hang+".grandpid")
	require.True(t, processAlive(pid))
	status, err := dev.CancelJob(ctx(t), hang)
	require.NoError(t, err)
	require.Equal(t, wire.CancelRequested, status)
	eventually(t, 30*time.Second, func() bool { return !processAlive(pid) && !processAlive(grand) },
		"the cancelled job's command and its child are gone")
	require.Equal(t, wire.StateCancelled, settle(hang).State)

	eventually(t, time.Minute, func() bool {
		j, err := dev.GetJob(ctx(t), progress)
		require.NoError(t, err)
		return j.State == wire.StateActive && j.Progress != nil && string(j.Checkpoint) == `{"step":3}`
	}, "progress and a checkpoint reach the running job")
	j, err = dev.GetJob(ctx(t), progress)
	require.NoError(t, err)
	require.Equal(t, client.Progress{Current: 3, Total: 10, Message: "three of ten"}, *j.Progress)

	// Drained at the local API while the progress job runs: the worker
	// takes no new job, finishes the one it holds and exits 0.
	workers, err := dev.ListWorkers(ctx(t))
	require.NoError(t, err)
	require.Len(t, workers, 1)
	drain := jobbie(t, env, nil, append([]string{"workers", "drain", workers[0].ID}, adminConn...)...)
	requireOK(t, drain, "workers drain at the local API")
	eventually(t, 30*time.Second, func() bool {
		ws, err := dev.ListWorkers(ctx(t))
		require.NoError(t, err)
		return len(ws) == 1 && ws[0].Draining
	}, "the worker is listed draining")
	left := enqueue("ack")
	require.NoError(t, os.WriteFile(filepath.Join(hdir, progress+".go"), nil, 0o644))
	j = settle(progress)
	require.Equal(t, wire.StateCompleted, j.State)
	require.JSONEq(t, `{"done":true}`, string(j.Result))
	w.wait(t)
	j, err = dev.GetJob(ctx(t), left)
	require.NoError(t, err)
	require.Equal(t, wire.StatePending, j.State, "a drained worker takes no new job")
}

// cliWorker is a `jobbie worker` process.
type cliWorker struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

// startCLIWorker runs the binary with args in env and HANDLER_DIR=hdir,
// its output in logPath; the cleanup kills it if the test did not stop it.
func startCLIWorker(t *testing.T, logPath string, env []string, hdir string, args ...string) *cliWorker {
	t.Helper()
	out, err := os.Create(logPath)
	require.NoError(t, err)
	w := &cliWorker{cmd: exec.Command(binary, args...), log: logPath, done: make(chan error, 1)}
	w.cmd.Env = append(env, "HANDLER_DIR="+hdir)
	w.cmd.Stdout, w.cmd.Stderr = out, out
	require.NoError(t, w.cmd.Start())
	go func() { w.done <- w.cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		select {
		case err := <-w.done:
			w.done <- err
		default:
			_ = w.cmd.Process.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("jobbie worker said:\n%s", b)
		}
	})
	return w
}

// wait waits for the worker to exit 0 by itself.
func (w *cliWorker) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-w.done:
		w.done <- err
		b, _ := os.ReadFile(w.log)
		require.NoError(t, err, "%s", b)
	case <-time.After(2 * time.Minute):
		t.Fatal("jobbie worker did not exit within 2 minutes")
	}
}

// readPidFile waits for the pid file name in dir.
func readPidFile(t *testing.T, dir, name string) int {
	t.Helper()
	var pid int
	eventually(t, time.Minute, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, "pid file "+name)
	return pid
}

// processAlive reports whether pid runs (a zombie does not).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
