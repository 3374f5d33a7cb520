// Package atomicfile replaces a file's content whole and durably: a
// reader, or the process after a crash, sees the old content or the new,
// never a part or an empty file. A node's certificate, its trust bundle
// and its join state are written this way.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Tmp is the temporary file Write uses beside path. A crash may leave it
// behind; the next Write replaces it, and an owner may remove it at start.
func Tmp(path string) string { return path + ".tmp" }

// Write replaces path with data: written to Tmp(path) with mode perm,
// synced, renamed over path, and the directory synced so the rename
// lasts. One writer of a path at a time: concurrent writers of the same
// path share its temporary file.
func Write(path string, data []byte, perm fs.FileMode) error {
	tmp := Tmp(path)
	// O_EXCL after a remove: the mode is the one asked for, not that of a
	// file left behind.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
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
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
