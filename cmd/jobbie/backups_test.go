package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// The backup policy commands set, show and delete --namespace's policy
// against jobbie dev; without a namespace they refuse before any request.
func TestBackupPolicyCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDev(t)
	key := filepath.Join(d.dir, "owner.key")
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := runJobbie(t, "", append(args, "--url", d.gateway, "--key-file", key)...)
		return out, err
	}
	out, err := run("backups", "policy", "set", "--namespace", "default", "--cron", "@daily", "--retention", "3")
	require.NoError(t, err)
	require.Regexp(t, `default\s+@daily\s+UTC\s+3\s+true`, out)
	out, err = run("backups", "policy", "get", "--namespace", "default", "-o", "json")
	require.NoError(t, err)
	var p client.BackupPolicy
	require.NoError(t, json.Unmarshal([]byte(out), &p), out)
	require.Equal(t, "@daily", p.Cron)
	require.Equal(t, 3, p.Retention)
	_, err = run("backups", "policy", "delete", "--namespace", "default")
	require.NoError(t, err)
	_, err = run("backups", "policy", "get", "--namespace", "default")
	require.Error(t, err, "no policy after delete")
	_, err = run("backups", "policy", "get")
	require.ErrorContains(t, err, "--namespace is required")
}

// backups create without --namespace backs up the key's default
// namespace, as its help says; with one, that namespace.
func TestBackupsCreateDefaultsToTheKeysNamespace(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	out := d.run(t, "backups", "create", "-o", "json")
	var b client.Backup
	require.NoError(t, json.Unmarshal([]byte(out), &b), out)
	require.Equal(t, "default", b.Namespace)
	d.run(t, "namespaces", "create", "other")
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "backups", "create", "--namespace", "other", "-o", "json")), &b))
	require.Equal(t, "other", b.Namespace)
	// A namespace has one backup running at a time: the next waits for it.
	first := b.ID
	require.Eventually(t, func() bool {
		var got client.Backup
		require.NoError(t, json.Unmarshal([]byte(d.run(t, "backups", "get", first, "-o", "json")), &got))
		return got.State != wire.BackupRunning
	}, time.Minute, 20*time.Millisecond, "backup %s still running", first)
	// A key whose default is another namespace backs that one up.
	out = d.run(t, "keys", "create", "--name", "other-owner", "--role", "owner", "--namespaces", "other")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	other := clitest.KeyFile(t, lines[len(lines)-1])
	out, err := d.as(t, other, "backups", "create", "-o", "json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &b), out)
	require.Equal(t, "other", b.Namespace)
}
