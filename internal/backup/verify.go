package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Checking a stored backup against what its catalog says it is. A stream
// verifies itself (its trailer's checksum), but a whole, valid stream of
// another backup (another tenant's, swapped into the store under this id)
// verifies too: only the catalog's figures, recorded when it was taken,
// tell them apart.

// ErrMismatch is wrapped by every error of a stored backup that is not the
// one its catalog entry describes.
var ErrMismatch = errors.New("backup: the stored backup is not the one its catalog entry describes")

// Expect is what a catalog entry says a stored backup is: its tenant and
// namespace, the sha256 of its uncompressed stream (Manifest.SHA256) and
// its stored size (Manifest.StoredBytes).
type Expect struct {
	Tenant      string
	Namespace   string
	ShardNS     string // the namespace as its shard names it; a stream may carry either name
	SHA256      string
	StoredBytes int64
}

// Check reports whether m, a stream's trailer or a store's manifest, of
// stored bytes in the store, is the backup e describes.
func (e Expect) Check(m Manifest, stored int64) error {
	// A stream naming no tenant is one that names its namespace as the
	// shard does, which holds the tenant.
	noTenant := m.Tenant == "" && e.ShardNS != "" && m.Namespace == e.ShardNS
	switch {
	case m.Tenant != e.Tenant && !noTenant:
		return fmt.Errorf("%w: it is tenant %q's, not %q's", ErrMismatch, m.Tenant, e.Tenant)
	case m.Namespace != e.Namespace && (e.ShardNS == "" || m.Namespace != e.ShardNS):
		return fmt.Errorf("%w: it is of namespace %q, not %q", ErrMismatch, m.Namespace, e.Namespace)
	case m.SHA256 != e.SHA256:
		return fmt.Errorf("%w: its checksum is %s, the catalog's %s", ErrMismatch, m.SHA256, e.SHA256)
	case stored != e.StoredBytes:
		return fmt.Errorf("%w: it is %d bytes, the catalog says %d", ErrMismatch, stored, e.StoredBytes)
	}
	return nil
}

// VerifyStored checks backup id of s against e before it is used: its kept
// manifest, then its whole stream, read once (valid, and the one e
// describes). It returns an error wrapping ErrMismatch, ErrCorrupt or the
// store's error.
func VerifyStored(ctx context.Context, s Store, id string, e Expect) error {
	m, err := s.Manifest(ctx, id)
	if err != nil {
		return err
	}
	if err := e.Check(m, m.StoredBytes); err != nil {
		return err
	}
	rc, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	defer rc.Close()
	cr := &countingReader{r: ctxReader{ctx: ctx, r: rc}}
	got, err := readManifest(cr)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, cr); err != nil { // the stored bytes after the trailer, if any, count
		return err
	}
	return e.Check(got, cr.n)
}

// Verified passes data on while checking it against e: the stream must be
// whole, valid and the backup e describes. It holds back the last bytes
// until the check is done, so a reader of a stream that fails it never
// receives the whole stream: the read that would end it returns the error
// (wrapping ErrMismatch or ErrCorrupt) instead. Close closes data.
func Verified(data io.ReadCloser, e Expect) io.ReadCloser {
	pr, pw := io.Pipe()
	res := make(chan error, 1)
	v := &verifiedReader{src: data, pw: pw, res: res}
	go func() {
		m, err := readManifest(pr)
		if err == nil {
			_, err = io.Copy(io.Discard, pr) // to EOF, so the tee never blocks
		}
		pr.CloseWithError(err)
		if err == nil {
			err = e.Check(m, v.n)
		}
		res <- err
	}()
	return v
}

// verifiedReader is Verified's reader: it keeps one byte of the stream
// back until the source ends and the check has passed.
type verifiedReader struct {
	src  io.ReadCloser
	pw   *io.PipeWriter
	res  chan error
	n    int64  // bytes read from src; read by the checker after pw is closed
	buf  []byte // one read of src
	held []byte // read, checked so far, not yet passed on
	done bool
	err  error
}

func (v *verifiedReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for !v.done && len(v.held) < 2 {
		if v.buf == nil {
			v.buf = make([]byte, 32<<10)
		}
		n, err := v.src.Read(v.buf)
		if n > 0 {
			v.n += int64(n)
			if _, werr := v.pw.Write(v.buf[:n]); werr != nil {
				v.err = werr // the checker failed already
				v.src.Close()
				return 0, v.err
			}
			v.held = append(v.held, v.buf[:n]...)
		}
		if err == io.EOF {
			v.done = true
			v.pw.Close()
			if cerr := <-v.res; cerr != nil {
				v.err = cerr
				return 0, cerr
			}
		} else if err != nil {
			v.pw.CloseWithError(err)
			v.err = err
			return 0, err
		}
	}
	// Everything but the last byte may go before the source ended.
	keep := 1
	if v.done {
		keep = 0
	}
	n := copy(p, v.held[:max(len(v.held)-keep, 0)])
	v.held = v.held[n:]
	if n == 0 && v.done {
		return 0, io.EOF
	}
	return n, nil
}

func (v *verifiedReader) Close() error {
	if !v.done {
		v.pw.CloseWithError(errors.New("backup: verified reader closed early"))
	}
	return v.src.Close()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
