package backup

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader, both as a compressed
// stream and as an uncompressed one: it must never panic, never allocate
// far beyond its input, and either return a verified manifest consistent
// with the records it returned or an error wrapping ErrCorrupt or
// ErrUnsupportedVersion.
func FuzzReader(f *testing.F) {
	data, _ := writeStream(f, testHeader(), testRecords(30))
	raw := decompress(f, data)
	empty, _ := writeStream(f, testHeader(), nil)
	f.Add(data)
	f.Add(raw)
	f.Add(empty)
	f.Add(decompress(f, empty))
	f.Add(data[:len(data)/2])
	f.Add(raw[:len(raw)-3])
	f.Add([]byte(Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		check := func(r *Reader, err error) {
			if err != nil {
				expected(t, err)
				return
			}
			defer r.Close()
			recs, m, err := drain(r)
			if err != nil {
				expected(t, err)
				return
			}
			if m.Records != uint64(len(recs)) {
				t.Fatalf("manifest says %d records, read %d", m.Records, len(recs))
			}
			var sum uint64
			for _, n := range m.Counts {
				sum += n
			}
			if sum != m.Records {
				t.Fatalf("counts add to %d, records %d", sum, m.Records)
			}
		}
		check(NewReader(bytes.NewReader(in)))
		check(newRawReader(bytes.NewReader(in)))
	})
}

func expected(t *testing.T, err error) {
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) && err != io.EOF {
		t.Fatalf("unexpected error kind: %v", err)
	}
}
