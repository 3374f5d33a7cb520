package backup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func expectOf(m Manifest, stored int64) Expect {
	return Expect{Tenant: m.Tenant, Namespace: m.Namespace, SHA256: m.SHA256, StoredBytes: stored}
}

// A stored backup is checked against its catalog entry: another valid
// backup swapped in under its id (the data alone, or with its manifest)
// fails with ErrMismatch, as does one whose tenant, namespace, checksum
// or size is not the entry's; the backup itself passes.
func TestVerifyStoredAgainstTheCatalog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	mine, mm := writeStream(t, testHeader(), testRecords(50))
	other := testHeader()
	other.Tenant, other.Namespace = "globex", "globex/prod"
	theirs, _ := writeStream(t, other, testRecords(60))
	_, err = s.Put(ctx, "acme/b1", Manifest{}, bytes.NewReader(mine))
	require.NoError(t, err)
	_, err = s.Put(ctx, "globex/b2", Manifest{}, bytes.NewReader(theirs))
	require.NoError(t, err)
	e := expectOf(mm, int64(len(mine)))

	require.NoError(t, VerifyStored(ctx, s, "acme/b1", e))
	for name, bad := range map[string]Expect{
		"tenant":    {Tenant: "globex", Namespace: e.Namespace, SHA256: e.SHA256, StoredBytes: e.StoredBytes},
		"namespace": {Tenant: e.Tenant, Namespace: "acme/dev", SHA256: e.SHA256, StoredBytes: e.StoredBytes},
		"checksum":  {Tenant: e.Tenant, Namespace: e.Namespace, SHA256: "00", StoredBytes: e.StoredBytes},
		"size":      {Tenant: e.Tenant, Namespace: e.Namespace, SHA256: e.SHA256, StoredBytes: e.StoredBytes + 1},
	} {
		require.ErrorIs(t, VerifyStored(ctx, s, "acme/b1", bad), ErrMismatch, name)
	}

	// The other tenant's data file swapped in, its own manifest left: the
	// manifest passes, the stream does not.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acme", "b1"+dataSuffix), theirs, 0o600))
	err = VerifyStored(ctx, s, "acme/b1", e)
	require.ErrorIs(t, err, ErrMismatch)
	require.ErrorContains(t, err, `tenant "globex"`)
}

// Verified passes a matching stream on whole and ends it with EOF; a
// mismatching one is cut before its last byte with the error, so a
// reader never sees it whole.
func TestVerifiedHoldsTheEndBackUntilChecked(t *testing.T) {
	mine, mm := writeStream(t, testHeader(), testRecords(200))
	e := expectOf(mm, int64(len(mine)))
	got, err := io.ReadAll(Verified(io.NopCloser(bytes.NewReader(mine)), e))
	require.NoError(t, err)
	require.Equal(t, mine, got)

	other := testHeader()
	other.Tenant = "globex"
	theirs, _ := writeStream(t, other, testRecords(200))
	got, err = io.ReadAll(Verified(io.NopCloser(bytes.NewReader(theirs)), e))
	require.ErrorIs(t, err, ErrMismatch)
	require.Less(t, len(got), len(theirs))

	got, err = io.ReadAll(Verified(io.NopCloser(bytes.NewReader(mine[:len(mine)-10])), e))
	require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrMismatch), "%v", err)
	require.Less(t, len(got), len(mine)-10)

	// Closed before its end: no goroutine is left (the package's leak check).
	r := Verified(io.NopCloser(bytes.NewReader(mine)), e)
	_, err = r.Read(make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, r.Close())
}
