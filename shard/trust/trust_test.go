package trust

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

const tenant = "t_0123456789abcdefghijklmnop"

func bundle(version uint64) wire.TrustBundle {
	return wire.TrustBundle{
		TenantID: tenant, ShardID: "s1", IssuedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC),
		JWKS:        json.RawMessage(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"AAAA"}]}`),
		Revocations: wire.Revocations{Version: version, Revoked: []string{"key_1"}},
		Roles:       wire.TenantRoles{Version: version},
		Namespaces:  []wire.NamespacePlacement{{ShardID: "s1"}},
	}
}

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Discarded())
	return s
}

func TestPutLatest(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	_, _, ok := s.Latest()
	require.False(t, ok, "no bundle before the first push")
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "Open of nothing writes nothing")

	at := time.Now()
	require.NoError(t, s.Put(bundle(1), at))
	b, got, ok := s.Latest()
	require.True(t, ok)
	require.Equal(t, uint64(1), b.Revocations.Version)
	require.True(t, got.Equal(at))
	require.Equal(t, time.UTC, got.Location())

	// The newest push wins by receipt, even one control issued earlier.
	older := bundle(2)
	older.IssuedAt = older.IssuedAt.Add(-time.Hour)
	require.NoError(t, s.Put(older, at.Add(time.Second)))
	b, got, _ = s.Latest()
	require.Equal(t, uint64(2), b.Revocations.Version)
	require.True(t, got.Equal(at.Add(time.Second)))
}

// A restart finds the bundle and the time it was received then, not the
// time it was read back.
func TestReloadKeepsReceivedTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	at := time.Now().Add(-90 * time.Minute)
	require.NoError(t, s.Put(bundle(7), at))

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	_, err = os.Stat(path + ".tmp")
	require.ErrorIs(t, err, os.ErrNotExist, "the temporary file is renamed, not left")

	r := open(t, path)
	b, got, ok := r.Latest()
	require.True(t, ok)
	require.True(t, got.Equal(at), "received %s, reloaded as %s", at, got)
	want, _, _ := s.Latest()
	require.Equal(t, want, b)
}

// The file is replaced whole: its mode stays 0600 whatever a crash left
// in the temporary file's place, and the leftover is removed on Open.
func TestFileModeAndLeftoverTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	require.NoError(t, os.WriteFile(path+".tmp", []byte(`{"half":`), 0o644))
	s := open(t, path)
	_, err := os.Stat(path + ".tmp")
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.WriteFile(path+".tmp", []byte(`{"half":`), 0o644))
	require.NoError(t, s.Put(bundle(1), time.Now()))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	var f file
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &f))
	require.Equal(t, fileVersion, f.Version)
	require.Equal(t, tenant, f.Bundle.TenantID)
}

// A file that does not read as a bundle is set aside, not fatal: the
// store starts empty, says why, and the next push writes a good file.
func TestCorruptFileSetAside(t *testing.T) {
	for name, content := range map[string]string{
		"torn":        `{"version":1,"received_at":"2026-11-25T00:00:00Z","bundle":{"tenant_id":`,
		"not json":    "\x00\x01garbage",
		"no time":     `{"version":1,"bundle":{"tenant_id":"t_0123456789abcdefghijklmnop","shard_id":"s1"}}`,
		"no tenant":   `{"version":1,"received_at":"2026-11-25T00:00:00Z","bundle":{"shard_id":"s1"}}`,
		"new layout":  `{"version":2,"received_at":"2026-11-25T00:00:00Z","bundle":{"tenant_id":"t_0123456789abcdefghijklmnop","shard_id":"s1"}}`,
		"wrong types": `{"version":1,"received_at":"2026-11-25T00:00:00Z","bundle":{"tenant_id":5,"shard_id":"s1"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			s, err := Open(path)
			require.NoError(t, err)
			require.Error(t, s.Discarded())
			require.Contains(t, s.Discarded().Error(), "trust.json.corrupt")
			_, _, ok := s.Latest()
			require.False(t, ok)
			kept, err := os.ReadFile(path + ".corrupt")
			require.NoError(t, err)
			require.Equal(t, content, string(kept), "kept for inspection")
			_, err = os.Stat(path)
			require.ErrorIs(t, err, os.ErrNotExist)

			require.NoError(t, s.Put(bundle(3), time.Now()))
			b, _, ok := open(t, path).Latest()
			require.True(t, ok)
			require.Equal(t, uint64(3), b.Revocations.Version)
		})
	}
}

// A write that cannot happen changes nothing: the old bundle stays. (A
// non-empty directory where the temporary file goes fails the write, as
// root too.)
func TestPutFailureChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	at := time.Now()
	require.NoError(t, s.Put(bundle(1), at))
	require.NoError(t, os.MkdirAll(filepath.Join(path+".tmp", "x"), 0o700))
	require.Error(t, s.Put(bundle(2), at.Add(time.Second)))
	b, got, ok := s.Latest()
	require.True(t, ok)
	require.Equal(t, uint64(1), b.Revocations.Version)
	require.True(t, got.Equal(at))
	require.NoError(t, os.RemoveAll(path+".tmp"))
	b, _, _ = open(t, path).Latest()
	require.Equal(t, uint64(1), b.Revocations.Version, "the file too")
}

// Concurrent pushes and reads: readers see whole bundles, and the file
// holds the bundle memory holds once the pushes end.
func TestConcurrentPutsAndReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, at, ok := s.Latest(); ok {
				if b.Revocations.Version != b.Roles.Version || at.IsZero() {
					t.Errorf("a torn bundle: %+v at %s", b.Revocations, at)
					return
				}
			}
		}
	}()
	var puts sync.WaitGroup
	for i := range 8 {
		puts.Add(1)
		go func() {
			defer puts.Done()
			for j := range 5 {
				if err := s.Put(bundle(uint64(i*10+j+1)), time.Now()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	puts.Wait()
	close(stop)
	wg.Wait()
	mem, memAt, _ := s.Latest()
	disk, diskAt, ok := open(t, path).Latest()
	require.True(t, ok)
	require.Equal(t, mem.Revocations.Version, disk.Revocations.Version)
	require.True(t, memAt.Equal(diskAt))
}

// BenchmarkLatest is what a reader pays: an atomic load, no allocation.
func BenchmarkLatest(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), FileName))
	require.NoError(b, err)
	require.NoError(b, s.Put(bundle(1), time.Now()))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := s.Latest(); !ok {
			b.Fatal("no bundle")
		}
	}
}
