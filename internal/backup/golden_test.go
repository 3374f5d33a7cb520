package backup

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/example-v1.jbk")

// goldenStream writes the backup docs/BACKUP-FORMAT.md shows byte by byte.
func goldenStream(t *testing.T) ([]byte, Manifest) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{
		Tenant: "acme", Namespace: "acme/prod", ShardID: "shard-1", RaftIndex: 4242,
		CreatedAt: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		Kinds:     map[byte]string{'j': "jobs", 'q': "queues"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Kind: 'q', Key: []byte("qemails"), Value: []byte(`{"max_attempts":5}`)})
	w.Write(Record{Kind: 'j', Key: []byte("jjob_01JD0000000000000000000001"), Value: []byte(`{"queue":"emails"}`)})
	m, err := w.Close(map[string]string{"trigger": "manual"})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// TestGoldenV1 pins format version 1: a stream written by this build (in
// testdata) must stay readable, and the writer must keep producing the
// same uncompressed bytes. Changing either means a new format version.
func TestGoldenV1(t *testing.T) {
	path := filepath.Join("testdata", "example-v1.jbk")
	data, m := goldenStream(t)
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(decompress(t, golden), decompress(t, data)) {
		t.Fatal("the writer's uncompressed stream differs from format version 1's")
	}
	recs, gm, err := readAll(golden)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0].Key) != "qemails" || string(recs[1].Value) != `{"queue":"emails"}` {
		t.Fatalf("records %q", recs)
	}
	if gm.SHA256 != "51073bc721c55e10356733883ce310d19e267a79a89600b6bec6444b6c6ebb62" || gm.Bytes != 250 ||
		gm.SHA256 != m.SHA256 || gm.Counts["jobs"] != 1 || gm.Counts["queues"] != 1 {
		t.Fatalf("manifest %+v", gm)
	}
}
