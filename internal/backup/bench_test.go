package backup

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// jobLike returns n records shaped like a namespace's job records: a 'j'
// key with a 30-byte job id and a ~300-byte JSON value, partly random (ids,
// payload), partly repetitive (field names, queue, state), as real ones are.
func jobLike(n int) func(i int) Record {
	rng := rand.New(rand.NewPCG(1, 2))
	queues := []string{"emails", "billing", "thumbnails", "webhooks"}
	return func(i int) Record {
		id := fmt.Sprintf("job_01JD%022d", i)
		v := fmt.Appendf(nil, `{"id":%q,"queue":%q,"state":"pending","priority":%d,"attempts":0,"max_attempts":25,`+
			`"created_at":"2026-11-24T12:%02d:%02d.%06dZ","payload":{"user_id":%d,"email":"user%d@example.com",`+
			`"template":"welcome-%d","token":"%016x%016x"},"tags":{"region":"eu-west-1","tier":"pro"},"timeout_ms":30000}`,
			id, queues[i%len(queues)], rng.IntN(10), i/60%60, i%60, rng.IntN(1e6), rng.IntN(1e7), rng.IntN(1e7),
			rng.IntN(20), rng.Uint64(), rng.Uint64())
		return Record{Kind: 'j', Key: append([]byte{'j'}, id...), Value: v}
	}
}

// BenchmarkBackupDirStore writes a backup of 1,000,000 job-like records
// through a Writer straight into a DirStore (as a shard streams one), then
// reads it back through a Reader, verifying it.
func BenchmarkBackupDirStore(b *testing.B) {
	const n = 1_000_000
	gen := jobLike(n)
	recs := make([]Record, n)
	var rawValues int64
	for i := range recs {
		recs[i] = gen(i)
		rawValues += int64(len(recs[i].Key) + len(recs[i].Value))
	}
	s, err := NewDirStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	h := testHeader()
	h.Kinds = map[byte]string{'j': "jobs"}
	run := 0
	for b.Loop() {
		run++
		id := fmt.Sprintf("acme/prod/bench%d", run)
		start := time.Now()
		pr, pw := io.Pipe()
		done := make(chan Manifest, 1)
		go func() {
			w, err := NewWriter(pw, h)
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			m, err := w.Close(nil)
			pw.CloseWithError(err)
			done <- m
		}()
		// The manifest is only known once the stream ends; a real caller
		// learns it the same way, so Put gets it from the writer here.
		size, err := s.Put(ctx, id, Manifest{}, pr)
		if err != nil {
			b.Fatal(err)
		}
		m := <-done
		wrote := time.Since(start)

		start = time.Now()
		rc, err := s.Get(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		r, err := NewReader(rc)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		rm, err := r.Manifest()
		r.Close()
		rc.Close()
		if err != nil || got != n || rm.SHA256 != m.SHA256 {
			b.Fatalf("read %d records, manifest %+v, err %v", got, rm, err)
		}
		read := time.Since(start)
		b.ReportMetric(wrote.Seconds(), "write-s")
		b.ReportMetric(read.Seconds(), "read-s")
		b.ReportMetric(float64(n)/wrote.Seconds(), "write-records/s")
		b.ReportMetric(float64(n)/read.Seconds(), "read-records/s")
		b.ReportMetric(float64(rawValues)/(1<<20), "keys+values-MiB")
		b.ReportMetric(float64(m.Bytes)/(1<<20), "stream-MiB")
		b.ReportMetric(float64(size)/(1<<20), "stored-MiB")
	}
}

// BenchmarkCompression compares the codecs considered for the stream on
// the uncompressed stream of 200,000 job-like records: the figures behind
// choosing zstd at its fastest level, which on these records also compresses best.
func BenchmarkCompression(b *testing.B) {
	const n = 200_000
	gen := jobLike(n)
	var raw bytes.Buffer
	w, err := NewWriter(io.Discard, Header{Kinds: map[byte]string{'j': "jobs"}})
	if err != nil {
		b.Fatal(err)
	}
	// The raw stream: what the writer feeds its compressor.
	w.hw.w = &raw
	for i := range n {
		if err := w.Write(gen(i)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Close(nil); err != nil {
		b.Fatal(err)
	}
	codecs := map[string]func(io.Writer) io.WriteCloser{
		"zstd-fastest": func(w io.Writer) io.WriteCloser { return zenc(w, zstd.SpeedFastest) },
		"zstd-default": func(w io.Writer) io.WriteCloser { return zenc(w, zstd.SpeedDefault) },
		"zstd-better":  func(w io.Writer) io.WriteCloser { return zenc(w, zstd.SpeedBetterCompression) },
		"gzip-1":       func(w io.Writer) io.WriteCloser { g, _ := gzip.NewWriterLevel(w, 1); return g },
		"gzip-6":       func(w io.Writer) io.WriteCloser { g, _ := gzip.NewWriterLevel(w, 6); return g },
	}
	for _, name := range []string{"zstd-fastest", "zstd-default", "zstd-better", "gzip-1", "gzip-6"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(raw.Len()))
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				c := codecs[name](&out)
				if _, err := c.Write(raw.Bytes()); err != nil {
					b.Fatal(err)
				}
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(raw.Len())/float64(out.Len()), "ratio")
		})
	}
}

func zenc(w io.Writer, l zstd.EncoderLevel) io.WriteCloser {
	e, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(encoderWindow), zstd.WithEncoderLevel(l))
	if err != nil {
		panic(err)
	}
	return e
}
