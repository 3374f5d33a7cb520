package replica

import (
	"sync/atomic"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// Fast mode (Config.Fast). raft-wal has no option to skip fsync, but it
// reaches the disk through a VFS; this one passes every call to the real
// file system except Sync, which returns at once. Appended entries are
// then in the OS page cache when Raft counts them as stored: they survive
// the process being killed (the kernel writes them out) and a follower or
// leader machine failing while a majority stays up, but a power cut that
// takes down a majority together can lose writes that were acknowledged.
// Durable mode pays one fsync per group commit on every member for that.
func noSyncFiler(dir string) types.SegmentFiler {
	return segment.NewFiler(dir, noSyncFS{fs.New()})
}

type noSyncFS struct{ *fs.FS }

func (v noSyncFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (v noSyncFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.FS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

type noSyncFile struct{ types.WritableFile }

func (noSyncFile) Sync() error { return nil }

// logStore is the Raft log. raft-wal drops compacted entries a whole
// segment (64 MiB) at a time and still reads the rest of a segment after
// DeleteRange moved the first index past them; this hides them, so a
// follower that needs entries behind the first index gets a snapshot
// whatever the segment boundaries, as TrailingLogs promises.
// It counts the entries read from the log into reads (when set): those
// past the cache in front of it (logCacheEntries), as for a follower
// catching up.
type logStore struct {
	*wal.WAL
	reads *atomic.Uint64
}

func (l logStore) GetLog(index uint64, out *raft.Log) error {
	if first, err := l.FirstIndex(); err == nil && index < first {
		return raft.ErrLogNotFound
	}
	if l.reads != nil {
		l.reads.Add(1)
	}
	return l.WAL.GetLog(index, out)
}
