package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// jobbie dev on a data directory that exists with group and other access
// (a mkdir's 0755) makes it its owner's alone: it holds the CA's key and
// the owner's API key.
func TestDevMakesAnExistingDataDirPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chmod(dir, 0o755))
	d := startDevIn(t, dir)
	fi, err := os.Stat(d.dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}
