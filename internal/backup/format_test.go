package backup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

var testKinds = map[byte]string{'j': "jobs", 'q': "queues", 's': "schedules"}

func testHeader() Header {
	return Header{
		Tenant: "acme", Namespace: "acme/prod", ShardID: "shard-1", RaftIndex: 4242,
		CreatedAt: time.Date(2026, 11, 24, 12, 0, 0, 123456789, time.UTC), Kinds: testKinds,
	}
}

func testRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		kind := []byte{'j', 'q', 's'}[i%3]
		recs[i] = Record{
			Kind:  kind,
			Key:   fmt.Appendf(nil, "%c%08d", kind, i),
			Value: bytes.Repeat([]byte{byte(i)}, i%50),
		}
	}
	return recs
}

// writeStream writes recs and returns the compressed stream and manifest.
func writeStream(t testing.TB, h Header, recs []Record) ([]byte, Manifest) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	m, err := w.Close(map[string]string{"trigger": "test"})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// readAll reads a compressed stream to its end.
func readAll(data []byte) ([]Record, Manifest, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, Manifest{}, err
	}
	defer r.Close()
	return drain(r)
}

func drain(r *Reader) ([]Record, Manifest, error) {
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			m, err := r.Manifest()
			return recs, m, err
		}
		if err != nil {
			return recs, Manifest{}, err
		}
		recs = append(recs, rec)
	}
}

func decompress(t testing.TB, data []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	raw, err := d.DecodeAll(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// encoder is shared by the tests: EncodeAll is safe for concurrent use.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err)
	}
	return e
})

func compress(_ testing.TB, raw []byte) []byte { return encoder().EncodeAll(raw, nil) }

func TestRoundTrip(t *testing.T) {
	recs := testRecords(1000)
	data, wm := writeStream(t, testHeader(), recs)
	got, rm, err := readAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("read %d records, wrote %d", len(got), len(recs))
	}
	for i := range recs {
		if got[i].Kind != recs[i].Kind || !bytes.Equal(got[i].Key, recs[i].Key) || !bytes.Equal(got[i].Value, recs[i].Value) {
			t.Fatalf("record %d: got %+v, wrote %+v", i, got[i], recs[i])
		}
	}
	want := map[string]uint64{"jobs": 334, "queues": 333, "schedules": 333}
	for k, v := range want {
		if rm.Counts[k] != v || wm.Counts[k] != v {
			t.Errorf("count %s: read %d, written %d, want %d", k, rm.Counts[k], wm.Counts[k], v)
		}
	}
	if rm.Records != 1000 || rm.SHA256 != wm.SHA256 || len(rm.SHA256) != 64 || rm.Bytes != wm.Bytes || rm.Bytes == 0 {
		t.Errorf("manifest read %+v, written %+v", rm, wm)
	}
	h := testHeader()
	if rm.Tenant != h.Tenant || rm.Namespace != h.Namespace || rm.ShardID != h.ShardID ||
		rm.RaftIndex != h.RaftIndex || !rm.CreatedAt.Equal(h.CreatedAt) || rm.Labels["trigger"] != "test" ||
		rm.FormatVersion != FormatVersion {
		t.Errorf("manifest fields: %+v", rm)
	}
	// The uncompressed size the manifest covers is the raw stream less the trailer.
	raw := decompress(t, data)
	if rm.Bytes >= uint64(len(raw)) || raw[rm.Bytes] != tagTrailer {
		t.Errorf("manifest bytes %d, raw stream %d, byte there %q", rm.Bytes, len(raw), raw[rm.Bytes])
	}
}

func TestEmptyBackup(t *testing.T) {
	data, _ := writeStream(t, testHeader(), nil)
	got, m, err := readAll(data)
	if err != nil || len(got) != 0 || m.Records != 0 || len(m.Counts) != 3 || m.Counts["jobs"] != 0 {
		t.Fatalf("empty: %v records, manifest %+v, err %v", len(got), m, err)
	}
}

func TestWriterRefuses(t *testing.T) {
	if _, err := NewWriter(io.Discard, Header{}); err == nil {
		t.Error("a header without kinds was accepted")
	}
	if _, err := NewWriter(io.Discard, Header{Kinds: map[byte]string{'a': "x", 'b': "x"}}); err == nil {
		t.Error("a kind name declared twice was accepted")
	}
	w, err := NewWriter(io.Discard, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		{Kind: 'z', Key: []byte("k")},
		{Kind: 'j', Key: make([]byte, MaxKeyLen+1)},
		{Kind: 'j', Key: []byte("k"), Value: make([]byte, MaxValueLen+1)},
	} {
		if err := w.Write(r); err == nil {
			t.Errorf("record kind %q key %d value %d accepted", r.Kind, len(r.Key), len(r.Value))
		}
	}
	if _, err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Record{Kind: 'j'}); err == nil {
		t.Error("write after close accepted")
	}
}

func TestLargeValues(t *testing.T) {
	recs := []Record{
		{Kind: 'j', Key: bytes.Repeat([]byte("k"), MaxKeyLen), Value: bytes.Repeat([]byte("v"), MaxValueLen)},
		{Kind: 'q', Key: []byte("q"), Value: bytes.Repeat([]byte("w"), readChunk*3+7)},
	}
	data, _ := writeStream(t, testHeader(), recs)
	got, _, err := readAll(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if !bytes.Equal(got[i].Key, recs[i].Key) || !bytes.Equal(got[i].Value, recs[i].Value) {
			t.Fatalf("record %d differs", i)
		}
	}
}

// Every truncation of the stream, compressed or not, is an error wrapping
// ErrCorrupt, never a shorter backup read as whole.
func TestTruncated(t *testing.T) {
	data, _ := writeStream(t, testHeader(), testRecords(50))
	raw := decompress(t, data)
	for n := 0; n < len(raw); n++ {
		if _, _, err := readAll(compress(t, raw[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("raw stream cut at %d of %d: err %v", n, len(raw), err)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, _, err := readAll(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("compressed stream cut at %d of %d: err %v", n, len(data), err)
		}
	}
}

// Flipping a bit in any byte of the uncompressed stream is caught: by the
// checksum, the trailer's CRC, the counts or the framing.
func TestEveryByteFlipCaught(t *testing.T) {
	data, _ := writeStream(t, testHeader(), testRecords(8))
	raw := decompress(t, data)
	for i := range raw {
		for _, bit := range []int{i % 8, 7 - i%8} {
			bad := bytes.Clone(raw)
			bad[i] ^= 1 << bit
			_, _, err := readAll(compress(t, bad))
			if err == nil {
				t.Fatalf("bit %d of byte %d flipped: accepted", bit, i)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("bit %d of byte %d flipped: err %v wraps neither ErrCorrupt nor ErrUnsupportedVersion", bit, i, err)
			}
		}
	}
}

func TestCorruptCompressed(t *testing.T) {
	data, _ := writeStream(t, testHeader(), testRecords(200))
	for _, i := range []int{len(data) / 3, len(data) / 2, len(data) - 2} {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		if _, _, err := readAll(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("compressed byte %d damaged: err %v", i, err)
		}
	}
	if _, _, err := readAll(append(bytes.Clone(data), 0x28, 0xb5, 0x2f)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage after the stream: err %v", err)
	}
	if _, _, err := readAll([]byte("not zstd at all")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("not zstd: err %v", err)
	}
}

func TestTrailingDataInRawStream(t *testing.T) {
	data, _ := writeStream(t, testHeader(), testRecords(5))
	raw := append(decompress(t, data), 'r')
	if _, _, err := readAll(compress(t, raw)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("data after the trailer: err %v", err)
	}
}

func TestUnsupportedVersion(t *testing.T) {
	data, _ := writeStream(t, testHeader(), testRecords(5))
	raw := decompress(t, data)
	binary.BigEndian.PutUint16(raw[len(Magic):], 2)
	if _, _, err := readAll(compress(t, raw)); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("version 2: err %v", err)
	}
}

// A forged length far beyond the data is refused or fails as truncation
// without allocating what it claims.
func TestForgedLengths(t *testing.T) {
	data, _ := writeStream(t, testHeader(), nil)
	raw := decompress(t, data)
	hl := binary.BigEndian.Uint32(raw[len(Magic)+2:])
	body := raw[:len(Magic)+6+int(hl)]

	forged := func(kl, vl uint64) []byte {
		b := append(bytes.Clone(body), tagRecord, 'j')
		b = binary.AppendUvarint(b, kl)
		return binary.AppendUvarint(b, vl)
	}
	cases := map[string][]byte{
		"value over the limit":   forged(1, MaxValueLen+1),
		"key over the limit":     forged(MaxKeyLen+1, 0),
		"varint overflow":        append(append(bytes.Clone(body), tagRecord, 'j'), bytes.Repeat([]byte{0xff}, 11)...),
		"value at the limit":     forged(1, MaxValueLen),
		"trailer over the limit": append(bytes.Clone(body), tagTrailer, 0xff, 0xff, 0xff, 0xff),
		"header over the limit":  append([]byte(Magic), 0, 1, 0xff, 0xff, 0xff, 0xff),
	}
	for name, b := range cases {
		var before, after runtimeMem
		before.read()
		_, _, err := readAll(compress(t, b))
		after.read()
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v", name, err)
		}
		if grew := after.total - before.total; grew > 8<<20 {
			t.Errorf("%s: allocated %d bytes reading a %d-byte stream", name, grew, len(b))
		}
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

// A writer whose destination fails says so, on a Write or at Close.
func TestWriterDestinationFails(t *testing.T) {
	w, err := NewWriter(&failAfter{n: 1000}, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	for _, r := range testRecords(20000) {
		if failed = w.Write(r); failed != nil {
			break
		}
	}
	_, cerr := w.Close(nil)
	if failed == nil && cerr == nil {
		t.Fatal("no error from a destination that failed")
	}
	if cerr == nil {
		t.Fatal("Close after a failed Write succeeded")
	}
}
