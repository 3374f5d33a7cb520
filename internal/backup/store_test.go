package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// testStore is the conformance suite every Store passes.
func testStore(t *testing.T, s Store) {
	ctx := context.Background()
	data, wm := writeStream(t, testHeader(), testRecords(500))

	t.Run("PutGetManifest", func(t *testing.T) {
		size, err := s.Put(ctx, "acme/prod/b1", wm, bytes.NewReader(data))
		if err != nil || size != int64(len(data)) {
			t.Fatalf("put: size %d of %d, err %v", size, len(data), err)
		}
		m, err := s.Manifest(ctx, "acme/prod/b1")
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != "acme/prod/b1" || m.StoredBytes != size || m.SHA256 != wm.SHA256 || m.Records != 500 ||
			m.Counts["jobs"] != wm.Counts["jobs"] || !m.CreatedAt.Equal(wm.CreatedAt) || m.Labels["trigger"] != "test" {
			t.Fatalf("manifest %+v, written %+v", m, wm)
		}
		rc, err := s.Get(ctx, "acme/prod/b1")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		r, err := NewReader(rc)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		recs, rm, err := drain(r)
		if err != nil || len(recs) != 500 || rm.SHA256 != wm.SHA256 {
			t.Fatalf("read back %d records, manifest %+v, err %v", len(recs), rm, err)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		for _, id := range []string{"acme/prod/missing", "nobody", "acme/prod/b1/below"} {
			if _, err := s.Get(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("get %q: %v", id, err)
			}
			if _, err := s.Manifest(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("manifest %q: %v", id, err)
			}
			if err := s.Delete(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("delete %q: %v", id, err)
			}
		}
	})

	t.Run("ImmutableUntilDeleted", func(t *testing.T) {
		other, om := writeStream(t, testHeader(), testRecords(7))
		if _, err := s.Put(ctx, "acme/prod/b2", wm, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(ctx, "acme/prod/b2", om, bytes.NewReader(other)); !errors.Is(err, ErrExists) {
			t.Fatalf("second put: %v", err)
		}
		if got := getAll(t, s, "acme/prod/b2"); !bytes.Equal(got, data) {
			t.Fatal("a refused put changed the data")
		}
		if m, _ := s.Manifest(ctx, "acme/prod/b2"); m.Records != 500 {
			t.Fatalf("a refused put changed the manifest: %+v", m)
		}
		if err := s.Delete(ctx, "acme/prod/b2"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Manifest(ctx, "acme/prod/b2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
		if _, err := s.Put(ctx, "acme/prod/b2", om, bytes.NewReader(other)); err != nil {
			t.Fatalf("put after delete: %v", err)
		}
		if got := getAll(t, s, "acme/prod/b2"); !bytes.Equal(got, other) {
			t.Fatal("put after delete: old data")
		}
		if err := s.Delete(ctx, "acme/prod/b2"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("List", func(t *testing.T) {
		ids := []string{"acme/prod/b1", "acme/prod/b3", "acme/dev/c1", "beta/x/d1", "acme/production/e1"}
		for _, id := range ids[1:] {
			if _, err := s.Put(ctx, id, wm, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		for prefix, want := range map[string][]string{
			"":             {"acme/dev/c1", "acme/prod/b1", "acme/prod/b3", "acme/production/e1", "beta/x/d1"},
			"acme/":        {"acme/dev/c1", "acme/prod/b1", "acme/prod/b3", "acme/production/e1"},
			"acme/prod/":   {"acme/prod/b1", "acme/prod/b3"},
			"acme/prod":    {"acme/prod/b1", "acme/prod/b3", "acme/production/e1"},
			"acme/prod/b3": {"acme/prod/b3"},
			"zzz":          nil,
			"../":          nil,
		} {
			got := listIDs(t, s, prefix)
			if !equalStrings(got, want) {
				t.Errorf("list %q: %v, want %v", prefix, got, want)
			}
		}
		for _, id := range ids[1:] {
			if err := s.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if got := listIDs(t, s, ""); !equalStrings(got, []string{"acme/prod/b1"}) {
			t.Errorf("after deletes: %v", got)
		}
	})

	t.Run("InvalidIDs", func(t *testing.T) {
		for _, id := range []string{"", "../x", "a/../b", "/abs", "a//b", "a/", "a.b", `a\b`, "a b", "..", ".",
			string(make([]byte, 600)), "a/b/c/d/e/f/g/h/i"} {
			if _, err := s.Put(ctx, id, wm, bytes.NewReader(data)); !errors.Is(err, ErrInvalidID) {
				t.Errorf("put %q: %v", id, err)
			}
			if _, err := s.Get(ctx, id); !errors.Is(err, ErrInvalidID) {
				t.Errorf("get %q: %v", id, err)
			}
			if _, err := s.Manifest(ctx, id); !errors.Is(err, ErrInvalidID) {
				t.Errorf("manifest %q: %v", id, err)
			}
			if err := s.Delete(ctx, id); !errors.Is(err, ErrInvalidID) {
				t.Errorf("delete %q: %v", id, err)
			}
		}
		if got := listIDs(t, s, ""); !equalStrings(got, []string{"acme/prod/b1"}) {
			t.Errorf("after invalid puts: %v", got)
		}
	})

	t.Run("FailedPutLeavesNothing", func(t *testing.T) {
		bad := io.MultiReader(bytes.NewReader(data[:len(data)/2]), errReader{})
		if _, err := s.Put(ctx, "acme/prod/half", wm, bad); err == nil {
			t.Fatal("a put whose data failed succeeded")
		}
		if _, err := s.Manifest(ctx, "acme/prod/half"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after a failed put: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Put(cctx, "acme/prod/half", wm, bytes.NewReader(data)); err == nil {
			t.Fatal("a put with a cancelled context succeeded")
		}
		if got := listIDs(t, s, ""); !equalStrings(got, []string{"acme/prod/b1"}) {
			t.Fatalf("after failed puts: %v", got)
		}
		if _, err := s.Put(ctx, "acme/prod/half", wm, bytes.NewReader(data)); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if err := s.Delete(ctx, "acme/prod/half"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("VerifiedOnPut", func(t *testing.T) {
		raw := decompress(t, data)
		flipped := bytes.Clone(raw)
		flipped[len(flipped)/2] ^= 1
		for name, bad := range map[string][]byte{
			"truncated":      data[:len(data)-10],
			"bit flipped":    compress(t, flipped),
			"not a backup":   []byte("hello"),
			"empty":          nil,
			"uncompressed":   raw,
			"trailing bytes": append(bytes.Clone(data), compress(t, []byte("x"))...),
		} {
			if _, err := s.Put(ctx, "acme/prod/bad", Manifest{}, bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: put: %v", name, err)
			}
			if _, err := s.Manifest(ctx, "acme/prod/bad"); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: after a refused put: %v", name, err)
			}
		}
		// A zero manifest means the stream's own.
		if _, err := s.Put(ctx, "acme/prod/own", Manifest{}, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		m, err := s.Manifest(ctx, "acme/prod/own")
		if err != nil || m.SHA256 != wm.SHA256 || m.Records != wm.Records || m.Labels["trigger"] != "test" || m.ID != "acme/prod/own" {
			t.Fatalf("manifest from the stream: %+v, err %v", m, err)
		}
		// A manifest of another stream is refused.
		_, om := writeStream(t, testHeader(), testRecords(7))
		if _, err := s.Put(ctx, "acme/prod/other", om, bytes.NewReader(data)); !errors.Is(err, ErrManifestMismatch) {
			t.Fatalf("put with another stream's manifest: %v", err)
		}
		if err := s.Delete(ctx, "acme/prod/own"); err != nil {
			t.Fatal(err)
		}
		if got := listIDs(t, s, ""); !equalStrings(got, []string{"acme/prod/b1"}) {
			t.Fatalf("after refused puts: %v", got)
		}
	})

	t.Run("LargeObjectStreams", func(t *testing.T) {
		if testing.Short() {
			t.Skip("short")
		}
		const records = 2048 // of 64 KiB random values: 128 MiB that does not compress
		const bound = 64 << 20
		var putSum []byte
		var size int64
		peak := heapPeak(t, func() {
			pr, pw := io.Pipe()
			h := sha256.New()
			go func() { pw.CloseWithError(writeNoise(io.MultiWriter(pw, h), records)) }()
			n, err := s.Put(ctx, "acme/prod/large", Manifest{}, pr)
			pr.Close()
			if err != nil || n < records<<16 {
				t.Fatalf("put: %d bytes, err %v", n, err)
			}
			putSum, size = h.Sum(nil), n
		})
		t.Logf("put of %d MiB: heap rose %d MiB at most", size>>20, peak>>20)
		if peak > bound {
			t.Errorf("put of %d MiB raised the heap by %d MiB", size>>20, peak>>20)
		}
		peak = heapPeak(t, func() {
			rc, err := s.Get(ctx, "acme/prod/large")
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			h := sha256.New()
			if n, err := io.Copy(h, rc); err != nil || n != size {
				t.Fatalf("get: %d bytes, err %v", n, err)
			}
			if !bytes.Equal(h.Sum(nil), putSum) {
				t.Fatal("got other bytes than were put")
			}
		})
		t.Logf("get of %d MiB: heap rose %d MiB at most", size>>20, peak>>20)
		if peak > bound {
			t.Errorf("get of %d MiB raised the heap by %d MiB", size>>20, peak>>20)
		}
		if err := s.Delete(ctx, "acme/prod/large"); err != nil {
			t.Fatal(err)
		}
	})
}

// writeNoise writes a backup of n records with 64 KiB random values.
func writeNoise(w io.Writer, n int) error {
	bw, err := NewWriter(w, testHeader())
	if err != nil {
		return err
	}
	src := newNoise(int64(n) << 16)
	v := make([]byte, 64<<10)
	for i := range n {
		io.ReadFull(src, v)
		if err := bw.Write(Record{Kind: 'j', Key: fmt.Appendf(nil, "j%08d", i), Value: v}); err != nil {
			return err
		}
	}
	_, err = bw.Close(nil)
	return err
}

func getAll(t *testing.T, s Store, id string) []byte {
	t.Helper()
	rc, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func listIDs(t *testing.T, s Store, prefix string) []string {
	t.Helper()
	ms, err := s.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("list %q: %v", prefix, err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("source failed") }

// noise is n pseudo-random bytes, made as they are read.
type noise struct {
	rng  *rand.ChaCha8
	left int64
}

func newNoise(n int64) *noise { return &noise{rng: rand.NewChaCha8([32]byte{1}), left: n} }

func (r *noise) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	r.rng.Read(p)
	r.left -= int64(len(p))
	return len(p), nil
}

// heapPeak runs f and returns how far the live heap (as of each garbage
// collection; collections run often, GOGC lowered) rose above where it
// started: what f held, not the garbage it made.
func heapPeak(t *testing.T, f func()) uint64 {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}
