package roles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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
