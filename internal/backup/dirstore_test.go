package backup

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirStore(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "backups")
	s, err := NewDirStore(root)
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, s)

	// Nothing escaped the root, and no temporary file was left behind.
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Errorf("the store's parent holds %v (err %v)", entries, err)
	}
	// Nor a stream without its manifest (refused or deleted puts).
	var names []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", path)
		}
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if !equalStrings(names, []string{"acme/prod/b1.jbk", "acme/prod/b1.json"}) {
		t.Errorf("files left: %v", names)
	}
}

// The files are where the format doc says, and a manifest without its
// data is a backup that does not exist yet.
func TestDirStoreLayout(t *testing.T) {
	root := t.TempDir()
	s, err := NewDirStore(root)
	if err != nil {
		t.Fatal(err)
	}
	data, m := writeStream(t, testHeader(), testRecords(3))
	ctx := context.Background()
	if _, err := s.Put(ctx, "t1/ns/b1", m, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "t1", "ns", "b1.jbk"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("data file: %v", err)
	}
	mj, err := os.ReadFile(filepath.Join(root, "t1", "ns", "b1.json"))
	if err != nil || !bytes.Contains(mj, []byte(`"id": "t1/ns/b1"`)) {
		t.Fatalf("manifest file %s: %v", mj, err)
	}
	// A stray file that is no valid id is not listed.
	os.WriteFile(filepath.Join(root, "t1", "ns", "x.y.json"), mj, 0o600)
	if ids := listIDs(t, s, ""); !equalStrings(ids, []string{"t1/ns/b1"}) {
		t.Fatalf("list: %v", ids)
	}
}
