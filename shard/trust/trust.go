// Package trust keeps a self-hosted shard node's newest trust bundle
// (wire.TrustBundle): what its tenant's gateways last pushed to it, so
// the node's local API can judge the tenant's API keys while the hosted
// service is unreachable. Each node keeps its own copy: a bundle is not
// replicated state, and the newest push a node received wins.
//
// The bundle lives in memory behind an atomic pointer (Latest is a load)
// and in one file, written atomically (internal/atomicfile), with the wall-clock time it was received: a
// restart brings back the bundle and its age, so freshness keeps
// counting across it.
package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobbie/jobbie/internal/atomicfile"
	"github.com/jobbie/jobbie/wire"
)

// FileName is the store's file in a node's data directory.
const FileName = "trust.json"

// fileVersion is the layout of the file; another is set aside as unreadable.
const fileVersion = 1

// file is what the store writes.
type file struct {
	Version    int              `json:"version"`
	ReceivedAt time.Time        `json:"received_at"`
	Bundle     wire.TrustBundle `json:"bundle"`
}

// entry is one bundle and when it was received.
type entry struct {
	b  wire.TrustBundle
	at time.Time
}

// Store is a node's newest trust bundle, in memory and on disk.
type Store struct {
	path      string
	cur       atomic.Pointer[entry]
	mu        sync.Mutex // one writer of the file at a time
	discarded error
}

// Open loads the bundle an earlier run left at path, with the time it was
// received then. No file is no bundle. A file that does not read as a
// bundle (a torn disk, an edit by hand, another layout) is not fatal: it
// is renamed to path+".corrupt" (for inspection; an older one is
// replaced), the store starts empty until the next push, and Discarded
// says why. A temporary file left by a crash mid-write is removed. An
// error is an I/O failure the node cannot go on with (an unreadable data
// directory).
func Open(path string) (*Store, error) {
	s := &Store{path: path}
	if err := os.Remove(atomicfile.Tmp(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("trust: %w", err)
	}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("trust: %w", err)
	}
	e, err := parse(raw)
	if err != nil {
		s.discarded = fmt.Errorf("trust: %s set aside as %s.corrupt: %w", path, filepath.Base(path), err)
		if err := os.Rename(path, path+".corrupt"); err != nil {
			return nil, fmt.Errorf("trust: setting aside an unreadable %s: %w", path, err)
		}
		return s, nil
	}
	s.cur.Store(e)
	return s, nil
}

// parse reads a file the store wrote.
func parse(raw []byte) (*entry, error) {
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	switch {
	case f.Version != fileVersion:
		return nil, fmt.Errorf("layout version %d, not %d", f.Version, fileVersion)
	case f.ReceivedAt.IsZero():
		return nil, errors.New("no received_at")
	case f.Bundle.TenantID == "" || f.Bundle.ShardID == "":
		return nil, errors.New("the bundle names no tenant or no shard")
	}
	return &entry{b: f.Bundle, at: f.ReceivedAt.UTC()}, nil
}

// Discarded is why Open set aside the file it found, or nil.
func (s *Store) Discarded() error { return s.discarded }

// Put makes b, received at at (wall clock), the store's bundle: written
// to the file first, then published, so on an error (the disk) nothing
// changed. The last Put wins, whatever the bundles' IssuedAt: a gateway
// sends what control built for it last. b is the store's from then on:
// the caller must not change it.
func (s *Store) Put(b wire.TrustBundle, at time.Time) error {
	e := &entry{b: b, at: at.UTC()} // UTC drops the monotonic reading: the time reads the same after a reload
	raw, err := json.Marshal(file{Version: fileVersion, ReceivedAt: e.at, Bundle: b})
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := atomicfile.Write(s.path, raw, 0o600); err != nil {
		return fmt.Errorf("trust: writing %s: %w", s.path, err)
	}
	s.cur.Store(e)
	return nil
}

// Latest is the newest bundle and when it was received; ok is false
// before the first. The bundle's slices are shared with the store and
// every other reader: read them, never change them.
func (s *Store) Latest() (b wire.TrustBundle, receivedAt time.Time, ok bool) {
	e := s.cur.Load()
	if e == nil {
		return wire.TrustBundle{}, time.Time{}, false
	}
	return e.b, e.at, true
}
