package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteReplacesWholeWithTheModeAsked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.crt")
	require.NoError(t, Write(path, []byte("one"), 0o600))
	// A temporary file a crash left behind, readable by all: neither its
	// content nor its mode survives the next write.
	require.NoError(t, os.WriteFile(Tmp(path), []byte("torn"), 0o644))
	require.NoError(t, Write(path, []byte("two"), 0o600))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two", string(got))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, err = os.Stat(Tmp(path))
	require.ErrorIs(t, err, os.ErrNotExist, "no temporary file is left")
}

func TestWriteFailsAndLeavesTheOldContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trust.json")
	require.NoError(t, Write(path, []byte("old"), 0o600))
	require.Error(t, Write(filepath.Join(dir, "missing", "x"), []byte("new"), 0o600))
	// A directory where the file should be: the rename fails.
	blocked := filepath.Join(dir, "blocked")
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "child"), 0o700))
	require.Error(t, Write(blocked, []byte("new"), 0o600))
	_, err := os.Stat(Tmp(blocked))
	require.ErrorIs(t, err, os.ErrNotExist, "a failed write removes its temporary file")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))
}
