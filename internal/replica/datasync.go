package replica

import (
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// Durable mode's log files. raft-wal preallocates each segment at its
// full size when it creates it (fallocate) and fsyncs it on every
// commit; fdatasync is enough after the first: the data and the extents
// it was written to reach the disk (what reading it back needs), only
// the file's times may not. The first Sync of each file opened stays a
// full fsync (raft-wal's own for a new segment, which also syncs its
// directory entry). etcd's log does the same.
func dataSyncFiler(dir string) types.SegmentFiler {
	return segment.NewFiler(dir, dataSyncFS{fs.New()})
}

type dataSyncFS struct{ *fs.FS }

func (v dataSyncFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return newDataSyncFile(f), nil
}

func (v dataSyncFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.FS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return newDataSyncFile(f), nil
}

// newDataSyncFile wraps what raft-wal's FS opens: an *fs.File when it
// creates a segment, an *os.File when it reopens one for writing.
func newDataSyncFile(f types.WritableFile) types.WritableFile {
	rc, ok := f.(syscall.Conn)
	if !ok {
		return f
	}
	return &dataSyncFile{WritableFile: f, conn: rc}
}

type dataSyncFile struct {
	types.WritableFile
	conn   syscall.Conn
	synced atomic.Bool
}

func (f *dataSyncFile) Sync() error {
	if !f.synced.Load() {
		if err := f.WritableFile.Sync(); err != nil {
			return err
		}
		f.synced.Store(true)
		return nil
	}
	rc, err := f.conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
