package roles

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/internal/backup"
)

// backupStoreFlags say where control keeps backups: a directory (local
// to the node, or shared) or an S3-compatible bucket, with its keys read
// from files, never from flags.
type backupStoreFlags struct {
	dir                              string
	s3Endpoint, s3Bucket, s3Prefix   string
	s3AccessKeyFile, s3SecretKeyFile string
	s3Region                         string
	s3TLS                            bool
}

func (b *backupStoreFlags) flags(f *pflag.FlagSet, dirDefault string) {
	f.StringVar(&b.dir, "backup-dir", "", "directory that keeps namespace backups (default "+dirDefault+"); it is this node's alone: with several control nodes use S3 or a directory they share")
	f.StringVar(&b.s3Endpoint, "backup-s3-endpoint", "", "keep backups in this S3-compatible endpoint (host[:port]) instead of a directory")
	f.StringVar(&b.s3Bucket, "backup-s3-bucket", "", "the S3 bucket (it must exist)")
	f.StringVar(&b.s3Prefix, "backup-s3-prefix", "", "prefix of every object name, e.g. jobbie/")
	f.StringVar(&b.s3AccessKeyFile, "backup-s3-access-key-file", "", "file holding the S3 access key")
	f.StringVar(&b.s3SecretKeyFile, "backup-s3-secret-key-file", "", "file holding the S3 secret key")
	f.BoolVar(&b.s3TLS, "backup-s3-tls", true, "speak TLS to the S3 endpoint")
	f.StringVar(&b.s3Region, "backup-s3-region", "", "the S3 region (default: asked of the server)")
}

// store builds the store the flags name; defaultDir when none is named.
func (b *backupStoreFlags) store(defaultDir string) (backup.Store, error) {
	if b.s3Endpoint == "" {
		for name, v := range map[string]string{"--backup-s3-bucket": b.s3Bucket, "--backup-s3-prefix": b.s3Prefix,
			"--backup-s3-access-key-file": b.s3AccessKeyFile, "--backup-s3-secret-key-file": b.s3SecretKeyFile, "--backup-s3-region": b.s3Region} {
			if v != "" {
				return nil, fmt.Errorf("%s needs --backup-s3-endpoint", name)
			}
		}
		dir := b.dir
		if dir == "" {
			dir = defaultDir
		}
		return backup.NewDirStore(dir)
	}
	if b.dir != "" {
		return nil, errors.New("--backup-dir and --backup-s3-endpoint name two stores: give one")
	}
	if b.s3Bucket == "" || b.s3AccessKeyFile == "" || b.s3SecretKeyFile == "" {
		return nil, errors.New("--backup-s3-endpoint needs --backup-s3-bucket, --backup-s3-access-key-file and --backup-s3-secret-key-file")
	}
	access, err := readSecret("--backup-s3-access-key-file", b.s3AccessKeyFile)
	if err != nil {
		return nil, err
	}
	secret, err := readSecret("--backup-s3-secret-key-file", b.s3SecretKeyFile)
	if err != nil {
		return nil, err
	}
	return backup.NewS3Store(backup.S3Config{Endpoint: b.s3Endpoint, Bucket: b.s3Bucket, Prefix: b.s3Prefix,
		AccessKey: access, SecretKey: secret, Region: b.s3Region, TLS: b.s3TLS})
}

func readSecret(flag, path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "", fmt.Errorf("%s: %s is empty", flag, path)
	}
	return s, nil
}
