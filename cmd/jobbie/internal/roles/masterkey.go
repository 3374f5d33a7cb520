package roles

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/shard/envelope"
)

// masterKeyFlag is --encryption-master-key-file, of the roles that run a
// shard node: the operator's key that wraps the namespaces' keys for
// encryption at rest (shard/envelope).
func masterKeyFlag(f *pflag.FlagSet, v *string, what string) {
	f.StringVar(v, "encryption-master-key-file", "", "file holding the master key that wraps every namespace's encryption keys (32 random bytes, base64 or hex; mode 600): every shard node a namespace may move or be restored to needs the same one; "+what)
}

// loadMasterKey reads the master key file; "" is none.
func loadMasterKey(path string) (*envelope.Key, error) {
	if path == "" {
		return nil, nil
	}
	k, err := envelope.LoadKeyFile(path)
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// devMasterKey is `jobbie dev`'s master key: the file named, or one it
// makes in its data directory on first start, as it makes its CA.
func devMasterKey(path, dataDir string) (*envelope.Key, error) {
	if path != "" {
		return loadMasterKey(path)
	}
	path = filepath.Join(dataDir, "encryption-master.key")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		k := envelope.NewKey()
		if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(k[:])+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("dev: master key: %w", err)
		}
	}
	return loadMasterKey(path)
}
