package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/wire"
)

// runBinary runs the jobbie binary to its end with extra variables.
func runBinary(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "jobbie.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// `jobbie dev --config f --dry-run` prints the file's, the variables'
// and the flags' settings merged, flags first, and exits 0; a bad key or
// a value out of range is refused naming its path, exit 1, and nothing
// starts.
func TestDevConfigDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := writeConfig(t, dir, `
dev:
  data_dir: /var/lib/jobbie-from-file
  addr: 127.0.0.1:18080
  shards: 2
  max_conns: 500
gateway:
  control: https://10.0.0.5:8081
`)
	out, errOut, code := runBinary(t, []string{"JOBBIE_DEV_ADDR=127.0.0.1:28080", "JOBBIE_DEV_REPLICAS=3", "JOBBIE_DEV_LOG_FORMAT=json"},
		"dev", "--config", f, "--dry-run", "--replicas", "5")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{
		"data_dir: /var/lib/jobbie-from-file # file " + f + "\n",
		"addr: 127.0.0.1:28080 # env JOBBIE_DEV_ADDR\n", // env beats the file
		"replicas: 5 # flag --replicas\n",               // the flag beats env
		"shards: 2 # file " + f + "\n",
		"max_conns: 500 # file " + f + "\n",
		"log_format: json # env JOBBIE_DEV_LOG_FORMAT\n",
		"control_addr: 127.0.0.1:8081\n", // the default
	} {
		require.Contains(t, out, want)
	}
	_, err := os.Stat("/var/lib/jobbie-from-file")
	require.True(t, os.IsNotExist(err), "--dry-run made the data directory")

	bad := writeConfig(t, dir, "dev:\n  shards: 17\n  grpc_addr_typo: x\n")
	out, errOut, code = runBinary(t, nil, "dev", "--config", bad, "--dry-run")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "dev.grpc_addr_typo: unknown setting (line 3 of "+bad+")")
	require.Contains(t, errOut, "dev.shards (--shards, JOBBIE_DEV_SHARDS): 17 is out of range: 1 to 16")

	// Every role: a setting from the file, one from a variable, one
	// from a flag, and a flag beating both.
	roleFile := writeConfig(t, dir, `
gateway: {control: https://10.0.0.5:8081, name: gw-file, grpc_keepalive: 20s}
control: {data_dir: /srv/control-file, node_id: c-file, usage_pull_interval: 2m}
shard: {data_dir: /srv/shard-file, node_id: n-file, raft_timeout: 1s}
worker: {queue: [from-file], concurrency: 3, heartbeat: 2s}
`)
	for _, rc := range []struct {
		role, fileKey, envKey, flag string
		args                        []string
	}{
		{"gateway", "name: gw-file", "http", "grpc-keepalive", []string{"--grpc-keepalive", "30s"}},
		{"control", "node_id: c-file", "http", "usage-pull-interval", []string{"--usage-pull-interval", "3m0s"}},
		{"shard", "node_id: n-file", "http", "raft-timeout", []string{"--raft-timeout", "2s"}},
		{"worker", "queue: [from-file]", "url", "heartbeat", []string{"--heartbeat", "3s", "--", "true"}},
	} {
		envName := "JOBBIE_" + strings.ToUpper(rc.role+"_"+rc.envKey)
		args := append([]string{rc.role, "--config", roleFile, "--dry-run"}, rc.args...)
		out, errOut, code := runBinary(t, []string{envName + "=http://127.0.0.1:9999", "JOBBIE_" + strings.ToUpper(rc.role) + "_" + strings.ToUpper(strings.ReplaceAll(rc.flag, "-", "_")) + "=9h"}, args...)
		require.Equal(t, 0, code, "%s: %s", rc.role, errOut)
		require.Contains(t, out, rc.role+":\n", rc.role)
		require.Contains(t, out, rc.fileKey+" # file "+roleFile+"\n", rc.role)
		require.Contains(t, out, rc.envKey+": http://127.0.0.1:9999 # env "+envName+"\n", rc.role)
		require.Contains(t, out, strings.ReplaceAll(rc.flag, "-", "_")+": "+rc.args[1]+" # flag --"+rc.flag+"\n", rc.role)
	}

	// Without --dry-run too: the process refuses to start.
	_, errOut, code = runBinary(t, []string{"JOBBIE_GATEWAY_MAX_LONG_POLLS_PER_KEY=0"}, "gateway", "--control", "https://127.0.0.1:1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "gateway.max_long_polls_per_key (--max-long-polls-per-key, JOBBIE_GATEWAY_MAX_LONG_POLLS_PER_KEY): 0 is out of range: -1 or more, not 0")
}

// logLines are the JSON log lines of a log file.
func logLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// `jobbie dev --config f` runs with the file's settings (its addresses,
// data directory, JSON logs at debug from a variable) and serves: a job
// enqueued with a traceparent is worked by `jobbie worker --config`,
// whose key comes from its file or a variable. The dev's log has the
// request lines with request id, tenant, namespace and trace id; no log
// and no --dry-run output holds the API key, a join token or the gossip
// key given in files and variables.
func TestDevRunsFromConfigFileAndLogsNoSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ports, err := freeport.Loopback(3)
	require.NoError(t, err)
	data := filepath.Join(dir, "data")
	f := writeConfig(t, dir, fmt.Sprintf("dev:\n  data_dir: %s\n  addr: %s\n  control_addr: %s\n  shard_addr: %s\n  log_format: json\n",
		data, ports[0], ports[1], ports[2]))
	cmd := exec.Command(binary, "dev", "--config", f)
	cmd.Env = append(os.Environ(), "JOBBIE_DEV_LOG_LEVEL=debug")
	devLog := filepath.Join(dir, "dev.log")
	dev, err := devproc.Start(cmd, devLog, "Jobbie is running")
	require.NoError(t, err)
	t.Cleanup(dev.Stop)
	require.NoError(t, dev.WaitReady(60*time.Second), dev.LogTail(30))
	owner, err := devproc.ReadKey(filepath.Join(data, "owner.key"))
	require.NoError(t, err)
	gw := "http://" + ports[0]

	// Enqueue with a traceparent and a request id of our own.
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	req, err := http.NewRequest(http.MethodPost, gw+"/api/v1/enqueue", strings.NewReader(`{"queue":"cfg.q","payload":{"n":1}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+owner)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(wire.TraceParentHeader, parent)
	req.Header.Set(wire.RequestIDHeader, "req_config_e2e")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var enq wire.EnqueueResponse
	require.NoError(t, json.NewDecoder(res.Body).Decode(&enq))
	res.Body.Close()
	require.Equal(t, http.StatusCreated, res.StatusCode)

	// A worker from its config file, the key in the file; the token and
	// gossip key of a shard's settings in a file and variables.
	secrets := []string{owner, "jt_file_secret_0123456789", "jt_env_secret_9876543210", "00112233445566778899aabbccddeeff"}
	wf := filepath.Join(dir, "worker.yaml")
	require.NoError(t, os.WriteFile(wf, []byte(fmt.Sprintf("worker:\n  url: %s\n  key: %s\n  queue: [cfg.q]\n  log_format: json\n  log_level: debug\n", gw, owner)), 0o600))
	wcmd := exec.Command(binary, "worker", "--config", wf, "--", "true")
	wLog := filepath.Join(dir, "worker.log")
	w, err := devproc.Start(wcmd, wLog, "")
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	eventually(t, 30*time.Second, func() bool { return jobState(t, gw, owner, enq.JobID) == "completed" }, "the worker from the config file completes the job")
	w.Stop()

	// The same worker in text, its key from a variable.
	wcmd = exec.Command(binary, "worker", "--url", gw, "--queue", "cfg.q", "--log-level", "debug", "--", "true")
	wcmd.Env = append(os.Environ(), "JOBBIE_WORKER_KEY="+owner)
	wLogText := filepath.Join(dir, "worker-text.log")
	w2, err := devproc.Start(wcmd, wLogText, "working")
	require.NoError(t, err)
	t.Cleanup(w2.Stop)
	require.NoError(t, w2.WaitReady(30*time.Second))
	w2.Stop()

	// A self-hosted shard node given a join token (file and variable)
	// and a gossip key: its join is refused by control, and it exits.
	sf := filepath.Join(dir, "shard.yaml")
	gossipKey := filepath.Join(dir, "gossip.key")
	require.NoError(t, os.WriteFile(gossipKey, []byte(secrets[3]+"\n"), 0o600))
	require.NoError(t, os.WriteFile(sf, []byte(fmt.Sprintf("shard:\n  node_id: n1\n  data_dir: %s\n  join_token: %s\n  control_url: https://%s\n  ca_file: %s\n  gossip_key_file: %s\n  gossip: 127.0.0.1:0\n  log_level: debug\n",
		filepath.Join(dir, "node"), secrets[1], ports[1], filepath.Join(data, "pki", "ca.crt"), gossipKey)), 0o600))
	shardOut, shardErr, code := runBinary(t, []string{"JOBBIE_SHARD_JOIN_TOKEN=" + secrets[2], "JOBBIE_SHARD_LOG_FORMAT=json"}, "shard", "--config", sf)
	require.NotEqual(t, 0, code, "a join with a made-up token: %s", shardErr)
	t.Logf("shard: %s", shardErr)

	dry, dryErr, code := runBinary(t, []string{"JOBBIE_SHARD_JOIN_TOKEN=" + secrets[2]}, "shard", "--config", sf, "--dry-run")
	require.Equal(t, 0, code, dryErr)
	require.Contains(t, dry, "join_token: '[redacted]' # env JOBBIE_SHARD_JOIN_TOKEN")
	wdry, wdryErr, code := runBinary(t, nil, "worker", "--config", wf, "--dry-run", "--", "true")
	require.Equal(t, 0, code, wdryErr)
	require.Contains(t, wdry, "key: '[redacted]' # file "+wf)

	dev.Stop()
	outputs := map[string]string{"shard stdout": shardOut, "shard stderr": shardErr, "shard --dry-run": dry + dryErr, "worker --dry-run": wdry + wdryErr}
	for name, p := range map[string]string{"dev log": devLog, "worker log (json)": wLog, "worker log (text)": wLogText} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		outputs[name] = string(b)
	}
	for name, out := range outputs {
		for _, s := range secrets {
			require.NotContains(t, out, s, "%s holds a secret", name)
		}
	}

	// The dev's JSON log has the enqueue's request line, and the
	// worker's fetches at debug.
	var enqLine map[string]any
	fetches := 0
	for _, l := range logLines(t, devLog) {
		if l["msg"] != "gateway: request" {
			continue
		}
		if l["request_id"] == "req_config_e2e" {
			enqLine = l
		}
		if l["route"] == "/api/v1/fetch" {
			fetches++
		}
	}
	require.NotNil(t, enqLine, "no request line of the enqueue in %s", devLog)
	require.Equal(t, "default", enqLine["namespace"])
	require.NotEmpty(t, enqLine["tenant"])
	require.Equal(t, "0af7651916cd43dd8448eb211c80319c", enqLine["trace_id"])
	require.EqualValues(t, http.StatusCreated, enqLine["status"])
	require.Positive(t, fetches, "no request line of a worker's fetch")
}

// jobState is the job's state as the gateway tells it.
func jobState(t *testing.T, gw, key, id string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, gw+"/api/v1/jobs/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var j struct {
		State string `json:"state"`
	}
	_ = json.NewDecoder(res.Body).Decode(&j)
	return j.State
}
