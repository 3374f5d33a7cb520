package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// DirStore keeps backups as files under a directory: <id>.jbk (the stream)
// and <id>.json (the manifest), '/' in an id making subdirectories. Each
// file is written to a temporary file, synced and renamed into place, so a
// crash leaves either the whole file or none.
type DirStore struct {
	root string
}

// NewDirStore opens (creating it if need be) a store under dir.
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("backup: store directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("backup: store directory: %w", err)
	}
	return &DirStore{root: abs}, nil
}

func (s *DirStore) path(id, suffix string) string {
	return filepath.Join(s.root, filepath.FromSlash(id)+suffix)
}

// Put implements Store.
func (s *DirStore) Put(ctx context.Context, id string, m Manifest, data io.Reader) (int64, error) {
	if err := ValidateID(id); err != nil {
		return 0, err
	}
	mpath := s.path(id, manifestSuffix)
	if _, err := os.Lstat(mpath); err == nil {
		return 0, fmt.Errorf("%w: %q", ErrExists, id)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("backup: put %q: %w", id, err)
	}
	dir := filepath.Dir(mpath)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return 0, fmt.Errorf("backup: put %q: %w", id, err)
	}
	verified, finish := verifyWhileStoring(ctxReader{ctx, data}, m)
	size, err := writeAtomic(s.path(id, dataSuffix), verified, func(copyErr error) (err error) {
		m, err = finish(copyErr)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("backup: put %q: %w", id, err)
	}
	mj, err := storedManifest(id, m, size)
	if err != nil {
		return 0, err
	}
	if _, err := writeAtomic(mpath, bytes.NewReader(mj), nil); err != nil {
		return 0, fmt.Errorf("backup: put %q manifest: %w", id, err)
	}
	return size, syncDir(dir)
}

// writeAtomic writes r to a temporary file beside path, syncs it and
// renames it over path. check, if not nil, is given the copy's error and
// has the last word on whether the file is kept.
func writeAtomic(path string, r io.Reader, check func(error) error) (int64, error) {
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	n, err := io.Copy(f, r)
	if check != nil {
		err = check(err)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return n, nil
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("backup: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("backup: sync %s: %w", dir, err)
	}
	return nil
}

// Get implements Store.
func (s *DirStore) Get(ctx context.Context, id string) (io.ReadCloser, error) {
	if _, err := s.Manifest(ctx, id); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(id, dataSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("backup: get %q: %w", id, err)
	}
	return f, nil
}

// Manifest implements Store.
func (s *DirStore) Manifest(ctx context.Context, id string) (Manifest, error) {
	if err := ValidateID(id); err != nil {
		return Manifest{}, err
	}
	b, err := os.ReadFile(s.path(id, manifestSuffix))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err) {
		return Manifest{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: manifest %q: %w", id, err)
	}
	return parseManifest(id, b)
}

// isNotDir is true for a path through a file where a directory would be
// (an id "a/b" when "a" is not a directory): that id does not exist.
func isNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR)
}

// List implements Store.
func (s *DirStore) List(ctx context.Context, prefix string) ([]Manifest, error) {
	// Walk only the deepest directory the prefix names.
	start := s.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if ValidateID(prefix[:i]) != nil {
			return nil, nil // no valid id lies under it
		}
		start = filepath.Join(s.root, filepath.FromSlash(prefix[:i]))
	}
	var out []Manifest
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), manifestSuffix) || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(s.root, path)
		if err != nil {
			return err
		}
		id := strings.TrimSuffix(filepath.ToSlash(rel), manifestSuffix)
		if !strings.HasPrefix(id, prefix) || ValidateID(id) != nil {
			return nil
		}
		m, err := s.Manifest(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil // deleted while listing
		}
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup: list %q: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete implements Store. The manifest goes first, so the backup stops
// being visible before its data goes.
func (s *DirStore) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	mpath := s.path(id, manifestSuffix)
	if err := os.Remove(mpath); errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	} else if err != nil {
		return fmt.Errorf("backup: delete %q: %w", id, err)
	}
	if err := os.Remove(s.path(id, dataSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: delete %q: %w", id, err)
	}
	return syncDir(filepath.Dir(mpath))
}
