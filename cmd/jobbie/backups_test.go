package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/internal/backup"
)

// The backup store flags: a directory by default, S3 with its keys from
// files, and clear errors for what does not fit together.
func TestBackupStoreFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := (&backupStoreFlags{}).store(filepath.Join(dir, "backups"))
	require.NoError(t, err)
	require.IsType(t, &backup.DirStore{}, st)
	require.DirExists(t, filepath.Join(dir, "backups"))

	key := filepath.Join(dir, "access")
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(key, []byte("AKIA\n"), 0o600))
	require.NoError(t, os.WriteFile(secret, []byte("s3cr3t\n"), 0o600))
	s3 := backupStoreFlags{s3Endpoint: "127.0.0.1:9000", s3Bucket: "b", s3AccessKeyFile: key, s3SecretKeyFile: secret}
	st, err = s3.store(dir)
	require.NoError(t, err)
	require.IsType(t, &backup.S3Store{}, st)

	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, tc := range []struct {
		f    backupStoreFlags
		want string
	}{
		{backupStoreFlags{s3Bucket: "b"}, "--backup-s3-bucket needs --backup-s3-endpoint"},
		{backupStoreFlags{dir: dir, s3Endpoint: "h:1", s3Bucket: "b", s3AccessKeyFile: key, s3SecretKeyFile: secret}, "give one"},
		{backupStoreFlags{s3Endpoint: "h:1", s3Bucket: "b", s3AccessKeyFile: key}, "needs --backup-s3-bucket"},
		{backupStoreFlags{s3Endpoint: "h:1", s3Bucket: "b", s3AccessKeyFile: key, s3SecretKeyFile: empty}, "is empty"},
		{backupStoreFlags{s3Endpoint: "h:1", s3Bucket: "b", s3AccessKeyFile: filepath.Join(dir, "nope"), s3SecretKeyFile: secret}, "--backup-s3-access-key-file"},
		{backupStoreFlags{s3Endpoint: "http://h:1", s3Bucket: "b", s3AccessKeyFile: key, s3SecretKeyFile: secret}, "without a scheme"},
	} {
		_, err := tc.f.store(dir)
		require.ErrorContains(t, err, tc.want)
	}
}

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
