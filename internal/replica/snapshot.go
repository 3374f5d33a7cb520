package replica

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

// tmpDirName is the scratch directory under Config.Dir for checkpoints
// being streamed and snapshots being restored; Open empties it.
const tmpDirName = "tmp"

// snapshotMagic starts every snapshot this version writes. On-disk and
// wire format, never change: the magic, then a tar archive of the files of
// a Pebble checkpoint (regular files, paths relative to the checkpoint).
// A stream without the magic is the first format (snapshot_legacy.go).
const snapshotMagic = "jobbie-pebble-checkpoint/1\n"

// Snapshot takes a Pebble checkpoint: hard links to the immutable sstables
// plus a copy of the manifest, so it costs little however big the state
// is. Raft calls it on the FSM goroutine, between applies, so the
// checkpoint holds exactly the entries applied so far once the memtables
// are flushed (there is no Pebble WAL to carry them); the flush also makes
// the state up to the snapshot durable before Raft compacts the log behind
// it, which is what lets a restart apply the lost tail from the log.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if err := os.MkdirAll(f.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("replica: snapshot: %w", err)
	}
	dir := filepath.Join(f.tmp, fmt.Sprintf("checkpoint-%d-%d", f.applied.Load(), time.Now().UnixNano()))
	if err := f.db.Flush(); err != nil {
		return nil, fmt.Errorf("replica: flush before snapshot: %w", err)
	}
	if err := f.db.Checkpoint(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("replica: checkpoint: %w", err)
	}
	return &checkpoint{dir: dir}, nil
}

// checkpoint is a snapshot waiting to be streamed into Raft's store.
type checkpoint struct{ dir string }

func (c *checkpoint) Persist(sink raft.SnapshotSink) error {
	if err := writeCheckpoint(sink, c.dir); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("replica: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (c *checkpoint) Release() { _ = os.RemoveAll(c.dir) }

// writeCheckpoint streams dir as the magic and a tar archive.
func writeCheckpoint(w io.Writer, dir string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.WriteString(snapshotMagic); err != nil {
		return err
	}
	tw := tar.NewWriter(bw)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		return addFile(tw, path, filepath.ToSlash(rel))
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

func addFile(tw *tar.Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, Mode: 0o644, Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, info.Size())
	return err
}

// Restore replaces the whole state with a snapshot's. The state is
// replaced in place, by ingesting one sstable, never by swapping the
// *pebble.DB: readers holding the DB (every Node.DB caller) see the old
// state or the new one and never a closed database, and a crash leaves
// one state or the other (see needsRestore for the rest of that story).
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closeOwn() // the caches are reset below
	f.stale = false
	r := bufio.NewReaderSize(rc, 1<<20)
	head, _ := r.Peek(len(snapshotMagic))
	var err error
	if string(head) == snapshotMagic {
		_, _ = r.Discard(len(snapshotMagic))
		err = f.restoreCheckpoint(r)
	} else {
		err = f.restoreLegacy(r)
	}
	if err != nil {
		return err
	}
	// The caches go before the new applied index and the restore count are
	// seen: whoever waits on those must not read what the caches kept of
	// the old state.
	f.reg.reset()
	if err := f.loadApplied(); err != nil {
		return err
	}
	f.restores.Add(1)
	f.appliedMoved()
	return nil
}

// restoreCheckpoint unpacks the checkpoint, opens it read-only, copies it
// into one sstable that also deletes every key, and ingests that.
func (f *fsm) restoreCheckpoint(r io.Reader) error {
	base := filepath.Join(f.tmp, fmt.Sprintf("restore-%d", time.Now().UnixNano()))
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "checkpoint")
	if err := untar(r, dir); err != nil {
		return fmt.Errorf("replica: unpack snapshot: %w", err)
	}
	src, err := pebble.Open(dir, &pebble.Options{ReadOnly: true, Logger: quietPebble{}})
	if err != nil {
		return fmt.Errorf("replica: open snapshot: %w", err)
	}
	sst := filepath.Join(base, "state.sst")
	err = f.writeReplacement(src, sst)
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replica: build restore table: %w", err)
	}
	if err := f.db.Ingest([]string{sst}); err != nil {
		return fmt.Errorf("replica: ingest snapshot: %w", err)
	}
	return nil
}

// writeReplacement writes every key of src, and a range deletion over the
// whole key space, into one sstable. Ingested, all of it takes one new
// sequence number: the deletion removes every older key and none of its
// own. (CockroachDB applies Raft snapshots the same way.)
func (f *fsm) writeReplacement(src *pebble.DB, path string) error {
	file, err := vfs.Default.Create(path)
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(file), sstable.WriterOptions{
		TableFormat: f.db.FormatMajorVersion().MaxTableFormat(),
	})
	if err := w.DeleteRange([]byte{}, allKeysEnd); err != nil {
		_ = w.Close()
		return err
	}
	it, err := src.NewIter(nil)
	if err != nil {
		_ = w.Close()
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := w.Set(it.Key(), it.Value()); err != nil {
			_ = it.Close()
			_ = w.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close() // syncs the file
}

// allKeysEnd bounds every key a state machine writes (namespaced keys and
// SystemPrefix keys alike).
var allKeysEnd = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// untar unpacks a snapshot's archive into dir, refusing anything but
// regular files inside it.
func untar(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(hdr.Name)
		if hdr.Typeflag != tar.TypeReg || !filepath.IsLocal(name) || strings.ContainsRune(hdr.Name, '\\') {
			return fmt.Errorf("unexpected entry %q in snapshot", hdr.Name)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// needsRestore reports whether Raft must restore its latest snapshot at
// start. Normally not (NoSnapshotRestoreOnStart): Pebble holds the state,
// synced up to every snapshot before Raft compacts its log. But a follower
// that died after saving a snapshot it was sent and before ingesting it
// holds older state, and Raft, taking the snapshot as applied, would never
// replay the entries in between. Entries without commands (a new leader's
// no-op, barriers, configuration changes) do not move the applied index,
// so a gap of only those, still in the log, needs nothing.
func needsRestore(logs raft.LogStore, snaps raft.SnapshotStore, applied uint64) (bool, error) {
	list, err := snaps.List()
	if err != nil {
		return false, fmt.Errorf("replica: list snapshots: %w", err)
	}
	if len(list) == 0 || list[0].Index <= applied {
		return false, nil
	}
	if list[0].Index-applied > 1024 {
		return true, nil
	}
	var l raft.Log
	for i := applied + 1; i <= list[0].Index; i++ {
		if err := logs.GetLog(i, &l); err != nil || l.Type == raft.LogCommand {
			return true, nil
		}
	}
	return false, nil
}

// resetDir empties dir, creating it if needed.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}
