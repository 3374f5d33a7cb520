package settings

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// opts are a role's values, as its flags hold them.
type opts struct {
	addr, token, level string
	conns              int
	every              time.Duration
	peers              []string
	fast               bool
	ran                bool
}

// testRole is a command with settings of every kind, installed as role
// "gateway"; run records that the command itself ran.
func testRole(o *opts) *cobra.Command {
	cmd := &cobra.Command{Use: "gateway", Args: cobra.NoArgs, SilenceErrors: true, SilenceUsage: true,
		RunE: func(*cobra.Command, []string) error { o.ran = true; return nil }}
	f := cmd.Flags()
	f.StringVar(&o.addr, "http", "127.0.0.1:8080", "listen address")
	f.StringVar(&o.token, "join-token", "", "a token")
	Secret(f, "join-token")
	f.IntVar(&o.conns, "max-conns", 100, "connections")
	Range(f, "max-conns", "-1", "1000")
	Except(f, "max-conns", "0")
	f.DurationVar(&o.every, "interval", time.Second, "how often")
	Range(f, "interval", "1ms", "")
	f.StringArrayVar(&o.peers, "peer", nil, "peers")
	f.BoolVar(&o.fast, "fast", false, "fast")
	f.StringVar(&o.level, "log-level", "info", "level")
	OneOf(f, "log-level", "debug", "info")
	Install(cmd, "gateway")
	return cmd
}

type run struct {
	o      opts
	stdout string
	err    error
}

// execute runs the test role with args and the variables env (only
// those: the test's own environment is not read).
func execute(t *testing.T, env map[string]string, args ...string) run {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var r run
	cmd := testRole(&r.o)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(args)
	r.err = cmd.Execute()
	r.stdout = out.String()
	return r
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jobbie.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// A flag beats its variable, a variable the file, the file the default,
// each setting on its own.
func TestPrecedence(t *testing.T) {
	file := writeFile(t, `
gateway:
  http: 10.0.0.1:1
  max_conns: 7
  interval: 5s
  peer: [a, b]
  fast: true
shard:
  anything: goes # another role's section is that role's to check
`)
	r := execute(t, map[string]string{"JOBBIE_GATEWAY_HTTP": "10.0.0.2:2", "JOBBIE_GATEWAY_MAX_CONNS": "8", "JOBBIE_GATEWAY_INTERVAL": ""},
		"--config", file, "--http", "10.0.0.3:3")
	require.NoError(t, r.err)
	require.True(t, r.o.ran)
	require.Equal(t, "10.0.0.3:3", r.o.addr, "the flag wins")
	require.Equal(t, 8, r.o.conns, "the variable beats the file")
	require.Equal(t, 5*time.Second, r.o.every, "an empty variable is unset: the file's")
	require.Equal(t, []string{"a", "b"}, r.o.peers, "a list from the file")
	require.True(t, r.o.fast)
	require.Equal(t, "info", r.o.level, "the default")

	// JOBBIE_CONFIG names the file when --config does not; a list
	// variable is comma-separated.
	r = execute(t, map[string]string{"JOBBIE_CONFIG": file, "JOBBIE_GATEWAY_PEER": "c, d", "JOBBIE_GATEWAY_HTTP": "", "JOBBIE_GATEWAY_MAX_CONNS": ""})
	require.NoError(t, r.err)
	require.Equal(t, "10.0.0.1:1", r.o.addr)
	require.Equal(t, []string{"c", "d"}, r.o.peers)
}

// Unknown keys and sections are refused with their paths, values out of
// range with their paths and ranges, all of them at once, and the
// command does not run.
func TestRefused(t *testing.T) {
	file := writeFile(t, `
gateway:
  grpc_addr_typo: x
  htp: 1.2.3.4:5
  max_conns: 0
  interval: 0s
  log_level: loud
  peer: {a: 1}
gatway:
  http: x
`)
	var o opts
	cmd := testRole(&o)
	cmd.SetArgs([]string{"--config", file})
	err := cmd.Execute()
	require.Error(t, err)
	require.False(t, o.ran)
	for _, want := range []string{
		"gateway.grpc_addr_typo: unknown setting (line 3 of " + file + ")",
		"gateway.htp: unknown setting (line 4 of " + file + "); did you mean http?",
		"gateway.max_conns (--max-conns, JOBBIE_GATEWAY_MAX_CONNS): 0 is out of range: -1 to 1000, not 0",
		"gateway.interval (--interval, JOBBIE_GATEWAY_INTERVAL): 0s is out of range: 1ms or more",
		`gateway.log_level (--log-level, JOBBIE_GATEWAY_LOG_LEVEL): "loud" is not one of debug, info`,
		"gateway.peer (line 8 of " + file + "): want a value or a list of values, not a mapping",
		"gatway: unknown section (line 9 of " + file + ")",
	} {
		require.ErrorContains(t, err, want)
	}

	// Too high, from a variable; a value of the wrong type, named by it.
	t.Run("env", func(t *testing.T) {
		r := execute(t, map[string]string{"JOBBIE_GATEWAY_MAX_CONNS": "1001", "JOBBIE_GATEWAY_FAST": "sometimes"})
		require.ErrorContains(t, r.err, "gateway.max_conns (--max-conns, JOBBIE_GATEWAY_MAX_CONNS): 1001 is out of range: -1 to 1000, not 0")
		require.ErrorContains(t, r.err, `gateway.fast (from JOBBIE_GATEWAY_FAST): invalid argument "sometimes"`)
		require.False(t, r.o.ran)
	})
	// A flag out of range too: the range is the setting's, wherever
	// the value came from.
	r := execute(t, nil, "--max-conns", "-2")
	require.ErrorContains(t, r.err, "gateway.max_conns (--max-conns, JOBBIE_GATEWAY_MAX_CONNS): -2 is out of range")
}

// --dry-run prints the effective settings as a file --config reads back
// to the same values, with their sources, a secret redacted, and does
// not run the command.
func TestDryRun(t *testing.T) {
	file := writeFile(t, "gateway:\n  max_conns: 7\n  join_token: file-secret-1\n")
	r := execute(t, map[string]string{"JOBBIE_GATEWAY_JOIN_TOKEN": "env-secret-2"}, "--config", file, "--peer", "p1", "--dry-run")
	require.NoError(t, r.err)
	require.False(t, r.o.ran, "--dry-run ran the command")
	require.NotContains(t, r.stdout, "secret-")
	require.Contains(t, r.stdout, "join_token: '[redacted]' # env JOBBIE_GATEWAY_JOIN_TOKEN\n")
	require.Contains(t, r.stdout, "max_conns: 7 # file "+file+"\n")
	require.Contains(t, r.stdout, "peer: [p1] # flag --peer\n")
	require.Contains(t, r.stdout, "http: 127.0.0.1:8080\n")

	var back map[string]map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(r.stdout), &back))
	require.Equal(t, map[string]any{"http": "127.0.0.1:8080", "join_token": Redacted, "max_conns": 7, "interval": "1s",
		"peer": []any{"p1"}, "fast": false, "log_level": "info"}, back["gateway"])

	// A secret that is not set prints as empty: nothing to hide.
	r = execute(t, map[string]string{"JOBBIE_GATEWAY_JOIN_TOKEN": ""}, "--dry-run")
	require.NoError(t, r.err)
	require.Contains(t, r.stdout, "join_token: \"\"\n")

	// Bad settings: the errors, and no effective settings.
	r = execute(t, nil, "--dry-run", "--max-conns", "0")
	require.ErrorContains(t, r.err, "gateway.max_conns")
	require.Empty(t, r.stdout)
}

// An empty file, or an empty section, sets nothing; a file that is not
// YAML, or not a mapping, is refused.
func TestFileShapes(t *testing.T) {
	for _, body := range []string{"", "# nothing\n", "gateway:\n"} {
		r := execute(t, nil, "--config", writeFile(t, body))
		require.NoError(t, r.err, "%q", body)
		require.Equal(t, 100, r.o.conns)
	}
	for body, want := range map[string]string{
		"gateway: [1]\n":   "gateway: want a mapping of settings, not a list",
		"- gateway\n":      "want a mapping of sections",
		"gateway: {http: ": "--config",
	} {
		r := execute(t, nil, "--config", writeFile(t, body))
		require.ErrorContains(t, r.err, want, "%q", body)
	}
	r := execute(t, nil, "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, r.err, "no such file")
}

// The schema names every setting's path, variable, type, default and
// range from its flag and annotations.
func TestSchema(t *testing.T) {
	t.Parallel()
	var o opts
	s := Schema(testRole(&o), "gateway")
	byKey := map[string]Setting{}
	for _, x := range s {
		byKey[x.Key()] = x
	}
	require.NotContains(t, byKey, "config")
	require.NotContains(t, byKey, "dry_run")
	mc := byKey["max_conns"]
	require.Equal(t, "gateway.max_conns", mc.Path)
	require.Equal(t, "JOBBIE_GATEWAY_MAX_CONNS", mc.Env)
	require.Equal(t, "int", mc.Type)
	require.Equal(t, "100", mc.Default)
	require.Equal(t, "-1 to 1000, not 0", mc.Range())
	require.True(t, byKey["join_token"].Secret)
	require.True(t, byKey["peer"].List())
	require.Equal(t, "one of debug, info", byKey["log_level"].Range())
}

// An error about a secret's value never quotes it.
func TestSecretNotInErrors(t *testing.T) {
	t.Parallel()
	role := func() (*cobra.Command, []Setting) {
		var n int
		cmd := &cobra.Command{Use: "shard"}
		f := cmd.Flags()
		f.IntVar(&n, "pin", 1, "a secret number")
		Secret(f, "pin")
		Range(f, "pin", "1", "9")
		return cmd, Schema(cmd, "shard")
	}
	cmd, s := role()
	require.NoError(t, cmd.Flags().Set("pin", "31337"))
	err := Check(s)
	require.ErrorContains(t, err, "shard.pin (--pin, JOBBIE_SHARD_PIN): [redacted] is out of range: 1 to 9")
	require.NotContains(t, err.Error(), "31337")

	cmd, s = role()
	_, err = Load(cmd.Flags(), s, "shard", "", func(name string) (string, bool) { return "s3cr3t-value", name == "JOBBIE_SHARD_PIN" })
	require.ErrorContains(t, err, "shard.pin (from JOBBIE_SHARD_PIN): not a valid int")
	require.NotContains(t, err.Error(), "s3cr3t-value")
}
