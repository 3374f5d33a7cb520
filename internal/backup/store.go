package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
)

// Errors every Store returns, whatever keeps the data.
var (
	ErrNotFound  = errors.New("backup: not found")
	ErrExists    = errors.New("backup: already exists")
	ErrInvalidID = errors.New("backup: invalid id")
)

// Store keeps backups: each one's compressed stream and, beside it, its
// manifest as JSON, so List and Manifest never read the data.
//
// A backup is immutable: Put of an id that already holds a backup returns
// ErrExists and changes nothing (delete it first to replace it). The
// manifest is written after the data and removed before it, so a backup is
// visible (to Get, Manifest and List) only when both are whole; a Put that
// failed half way leaves no visible backup, and may be retried. Ids are
// unique per backup (the catalog makes them): concurrent Puts of one id
// are not supported.
type Store interface {
	// Put stores data (read to its end, streamed, never held whole in
	// memory) under id and returns the stored size. It verifies the stream
	// in the same pass: one that is not a whole, valid backup is refused
	// (ErrCorrupt) and nothing becomes visible. The manifest kept is m, or,
	// when m is the zero Manifest, the stream's own trailer (a caller
	// streaming a backup as it is written knows it only at the end); a
	// given m must match the stream (ErrManifestMismatch). Either way it
	// is kept with ID and StoredBytes set.
	Put(ctx context.Context, id string, m Manifest, data io.Reader) (int64, error)
	// Get opens a backup's stream; the caller closes it.
	Get(ctx context.Context, id string) (io.ReadCloser, error)
	// Manifest returns a backup's manifest.
	Manifest(ctx context.Context, id string) (Manifest, error)
	// List returns the manifests of the backups whose ids start with
	// prefix, ordered by id.
	List(ctx context.Context, prefix string) ([]Manifest, error)
	// Delete removes a backup.
	Delete(ctx context.Context, id string) error
}

// Id rules: one to eight segments separated by '/', each 1-128 characters
// of [A-Za-z0-9_-], at most 512 in all. No dots, so no "..", no hidden or
// temporary names, and no clash with the stores' file suffixes; the same
// id is the same path in a directory and in a bucket.
const (
	maxIDLen      = 512
	maxIDSegments = 8
	maxSegmentLen = 128
)

// ValidateID reports whether id is a valid backup id, with an error
// wrapping ErrInvalidID naming the problem.
func ValidateID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: %q must be 1-%d characters", ErrInvalidID, id, maxIDLen)
	}
	segs := strings.Split(id, "/")
	if len(segs) > maxIDSegments {
		return fmt.Errorf("%w: %q has more than %d segments", ErrInvalidID, id, maxIDSegments)
	}
	for _, s := range segs {
		if s == "" || len(s) > maxSegmentLen {
			return fmt.Errorf("%w: %q: each '/'-separated segment must be 1-%d characters", ErrInvalidID, id, maxSegmentLen)
		}
		for _, c := range []byte(s) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return fmt.Errorf("%w: %q: character %q (allowed: letters, digits, '_', '-', '/')", ErrInvalidID, id, c)
			}
		}
	}
	return nil
}

// Object names, the same in every store.
const (
	dataSuffix     = ".jbk"
	manifestSuffix = ".json"
)

// storedManifest is the manifest as a store keeps it.
func storedManifest(id string, m Manifest, size int64) ([]byte, error) {
	m.ID, m.StoredBytes = id, size
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("backup: encode manifest: %w", err)
	}
	return append(b, '\n'), nil
}

func parseManifest(id string, b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("backup: manifest of %q: %w", id, err)
	}
	if m.ID != id {
		return Manifest{}, fmt.Errorf("backup: manifest of %q names id %q", id, m.ID)
	}
	return m, nil
}

// ctxReader stops a long copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ErrManifestMismatch is returned by Put when the manifest given does not
// describe the stream stored.
var ErrManifestMismatch = errors.New("backup: manifest does not match the stream")

// verifyWhileStoring passes data on to a store's copy while a Reader
// verifies it on the side, so a stream is checked in the same single pass
// that stores it. The store copies from the returned reader, then calls
// finish with its copy's error; finish returns the manifest to keep: m if
// m is given (it must match the stream), else the stream's own trailer. A
// stream failing verification fails the copy at once, with the error
// wrapping ErrCorrupt.
func verifyWhileStoring(data io.Reader, m Manifest) (io.Reader, func(copyErr error) (Manifest, error)) {
	pr, pw := io.Pipe()
	type result struct {
		m   Manifest
		err error
	}
	res := make(chan result, 1)
	go func() {
		got, err := readManifest(pr)
		// Fail the copy on a bad stream; after a good one, let the copy
		// run to its end (the reader has required EOF already).
		pr.CloseWithError(err)
		res <- result{got, err}
	}()
	src := &eofReader{r: data}
	finish := func(copyErr error) (Manifest, error) {
		pw.Close()
		r := <-res
		switch {
		// The stream's fault if it was read to its end, or if the copy
		// failed on the verifier's error; else the copy failed first.
		case r.err != nil && (copyErr == nil || src.eof.Load() || errors.Is(copyErr, r.err)):
			return Manifest{}, r.err
		case copyErr != nil:
			return Manifest{}, copyErr
		case m.SHA256 == "":
			return r.m, nil
		case m.SHA256 != r.m.SHA256 || m.Records != r.m.Records || m.Bytes != r.m.Bytes:
			return Manifest{}, fmt.Errorf("%w: given sha256 %s, %d records; stream %s, %d records",
				ErrManifestMismatch, m.SHA256, m.Records, r.m.SHA256, r.m.Records)
		}
		return m, nil
	}
	return io.TeeReader(src, pw), finish
}

// eofReader notes that its reader reached its end.
type eofReader struct {
	r   io.Reader
	eof atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof.Store(true)
	}
	return n, err
}

// readManifest reads a whole stream and returns its verified manifest.
func readManifest(r io.Reader) (Manifest, error) {
	rd, err := NewReader(r)
	if err != nil {
		return Manifest{}, err
	}
	defer rd.Close()
	for {
		if _, err := rd.Next(); err == io.EOF {
			return rd.Manifest()
		} else if err != nil {
			return Manifest{}, err
		}
	}
}

var (
	_ Store = (*DirStore)(nil)
	_ Store = (*S3Store)(nil)
)
