package backup

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	data, m := goldenStream(t)
	recs, gm := checkGolden(t, "example-v1.jbk", data)
	if len(recs) != 2 || string(recs[0].Key) != "qemails" || string(recs[1].Value) != `{"queue":"emails"}` {
		t.Fatalf("records %q", recs)
	}
	if gm.SHA256 != "51073bc721c55e10356733883ce310d19e267a79a89600b6bec6444b6c6ebb62" || gm.Bytes != 250 ||
		gm.SHA256 != m.SHA256 || gm.Counts["jobs"] != 1 || gm.Counts["queues"] != 1 {
		t.Fatalf("manifest %+v", gm)
	}
}

// checkGolden compares data, as this build writes it, with testdata/name
// (rewritten first with -update): their uncompressed bytes must be the
// same. It returns what the stored stream reads as.
func checkGolden(t *testing.T, name string, data []byte) ([]Record, Manifest) {
	t.Helper()
	path := filepath.Join("testdata", name)
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
		t.Fatalf("the writer's uncompressed stream differs from format version 1's (%s)", path)
	}
	recs, gm, err := readAll(golden)
	if err != nil {
		t.Fatal(err)
	}
	return recs, gm
}

// goldenDelta writes the delta stream docs/BACKUP-FORMAT.md shows: one
// record set, one deleted.
func goldenDelta(t *testing.T) ([]byte, Manifest) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{
		Tenant: "acme", Namespace: "acme/prod", ShardID: "shard-1", RaftIndex: 4300,
		CreatedAt: time.Date(2026, 11, 24, 12, 0, 5, 0, time.UTC),
		Kinds:     map[byte]string{'j': "jobs", 'q': "queues", KindDelete: KindDeleteName},
		Delta:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Kind: 'j', Key: []byte("jjob_01JD0000000000000000000001"), Value: []byte(`{"queue":"emails","state":"done"}`)})
	w.Write(Record{Kind: KindDelete, Key: []byte("qemails")})
	m, err := w.Close(nil)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// TestGoldenDeltaV1 pins a delta stream of format version 1 as
// TestGoldenV1 pins a full one.
func TestGoldenDeltaV1(t *testing.T) {
	data, m := goldenDelta(t)
	recs, gm := checkGolden(t, "example-delta-v1.jbk", data)
	if len(recs) != 2 || recs[1].Kind != KindDelete || string(recs[1].Key) != "qemails" || len(recs[1].Value) != 0 {
		t.Fatalf("records %q", recs)
	}
	if !gm.Delta || gm.SHA256 != m.SHA256 || gm.Counts[KindDeleteName] != 1 || gm.Counts["jobs"] != 1 || gm.Counts["queues"] != 0 {
		t.Fatalf("manifest %+v", gm)
	}
}

// A delete kind belongs to delta streams alone, and a delete carries no
// value: the writer refuses either, and so does the reader.
func TestDeltaRules(t *testing.T) {
	h := Header{Tenant: "a", Namespace: "a/b", Kinds: map[byte]string{'j': "jobs", KindDelete: KindDeleteName}}
	if _, err := NewWriter(io.Discard, h); err == nil {
		t.Fatal("a full stream declared the delete kind")
	}
	h.Kinds = map[byte]string{'j': "jobs"}
	h.Delta = true
	if _, err := NewWriter(io.Discard, h); err == nil {
		t.Fatal("a delta stream without the delete kind")
	}
	h.Kinds[KindDelete] = "gone"
	if _, err := NewWriter(io.Discard, h); err == nil {
		t.Fatal("the delete kind under another name")
	}
	h.Kinds[KindDelete] = KindDeleteName
	w, err := NewWriter(io.Discard, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Record{Kind: KindDelete, Key: []byte("k"), Value: []byte("v")}); err == nil {
		t.Fatal("a delete with a value")
	}
	// The reader: a raw stream whose delete carries a value.
	data, _ := goldenDelta(t)
	raw := decompress(t, data)
	i := bytes.Index(raw, []byte("r-\x07\x00qemails"))
	if i < 0 {
		t.Fatal("no delete frame in the golden delta")
	}
	bad := append(append(append([]byte{}, raw[:i]...), "r-\x07\x01qemailsx"...), raw[i+len("r-\x07\x00qemails"):]...)
	rd, err := newRawReader(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for last == nil {
		_, last = rd.Next()
	}
	if !errors.Is(last, ErrCorrupt) || !strings.Contains(last.Error(), "delete record with a value") {
		t.Fatalf("read %v", last)
	}
}
