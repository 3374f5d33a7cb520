package replica

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDataSyncFileKeepsWhatItSynced writes through durable mode's log
// files, new and reopened, syncing each twice (raft-wal's own first,
// then fdatasync), and reads the bytes back from the file.
func TestDataSyncFileKeepsWhatItSynced(t *testing.T) {
	dir := t.TempDir()
	v := dataSyncFS{}
	f, err := v.Create(dir, "seg", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*dataSyncFile); !ok {
		t.Fatalf("Create gave %T, not a *dataSyncFile", f)
	}
	write := func(f interface {
		WriteAt([]byte, int64) (int, error)
		Sync() error
	}, off int64, p []byte) {
		t.Helper()
		if _, err := f.WriteAt(p, off); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	write(f, 0, []byte("first"))
	write(f, 5, []byte("second"))
	if !f.(*dataSyncFile).synced.Load() {
		t.Fatal("the file's first Sync was not recorded: every later one would be a full fsync")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := v.OpenWriter(dir, "seg")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.(*dataSyncFile); !ok {
		t.Fatalf("OpenWriter gave %T, not a *dataSyncFile", g)
	}
	write(g, 11, []byte("third"))
	write(g, 16, []byte("fourth"))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "seg"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1<<20 || !bytes.HasPrefix(got, []byte("firstsecondthirdfourth")) {
		t.Fatalf("file of %d bytes starts %q", len(got), got[:22])
	}
}
