package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jobbie --help shows the server roles and the client commands in groups
// of their own.
func TestHelpGroups(t *testing.T) {
	t.Parallel()
	out, _, err := runJobbie(t, "", "--help")
	require.NoError(t, err)
	section := func(title string) string {
		t.Helper()
		i := strings.Index(out, title)
		require.GreaterOrEqual(t, i, 0, out)
		rest := out[i+len(title):]
		if j := strings.Index(rest, "\n\n"); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	names := func(sec string) (ns []string) {
		for _, m := range regexp.MustCompile(`(?m)^  (\S+)`).FindAllStringSubmatch(sec, -1) {
			ns = append(ns, m[1])
		}
		return ns
	}
	require.Equal(t, []string{"certs", "control", "dev", "gateway", "shard"}, names(section("Server roles (run Jobbie's processes):")))
	client := names(section("Client commands (call a gateway or the control plane):"))
	for _, c := range []string{"enqueue", "queues", "login", "context", "events", "top", "roles", "cluster", "bench"} {
		require.Contains(t, client, c)
	}
	require.NotContains(t, client, "dev")
	require.Equal(t, []string{"completion", "help", "version"}, names(section("Other commands:")))
	require.NotContains(t, out, "Available Commands:", "every command is in a group")
}

// jobbie completion bash|zsh|fish writes each shell's script, which the
// shell (where installed) reads without a syntax error; the completions
// it asks for name the commands and flags.
func TestShellCompletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ shell, marker string }{
		{"bash", "__start_jobbie"},
		{"zsh", "#compdef jobbie"},
		{"fish", "complete -c jobbie"},
	} {
		out, _, err := runJobbie(t, "", "completion", tc.shell)
		require.NoError(t, err)
		require.Contains(t, out, tc.marker, tc.shell)
		path := filepath.Join(dir, "jobbie."+tc.shell)
		require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
		sh, err := exec.LookPath(tc.shell)
		if err != nil {
			t.Logf("%s is not installed: its script's syntax is not checked", tc.shell)
			continue
		}
		args := []string{"-n", path}
		if tc.shell == "fish" {
			args = []string{"--no-execute", path}
		}
		b, err := exec.Command(sh, args...).CombinedOutput()
		require.NoError(t, err, "%s: %s", tc.shell, b)
	}
	// What the scripts call to complete.
	out, _, err := runJobbie(t, "", "__complete", "q")
	require.NoError(t, err)
	require.Contains(t, out, "queues\t")
	out, _, err = runJobbie(t, "", "__complete", "events", "--f")
	require.NoError(t, err)
	require.Contains(t, out, "--follow\t")
	out, _, err = runJobbie(t, "", "__complete", "context", "")
	require.NoError(t, err)
	for _, sub := range []string{"list", "use", "current", "delete"} {
		require.Contains(t, out, sub+"\t")
	}
}
