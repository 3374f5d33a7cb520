package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Backups of a namespace (docs/BACKUP-FORMAT.md, "The shard's records").
// A backup is every key under the namespace's prefix, read from one Pebble
// snapshot, with the prefix removed; the record kind says which family of
// keys (keys.go) it is. Keys about the namespace outside its prefix are
// not in it: the registry entry (a restore makes its own), the restore
// marker, and the usage meters and stored-bytes gauge (billing history
// stays where it was earned; control's ledger has it).

// Record kinds of a shard backup, on-disk format.
const (
	KindJobs      byte = 'j'
	KindQueues    byte = 'q'
	KindSchedules byte = 's'
	KindBatches   byte = 'b'
	KindLocks     byte = 'u'
	KindBulk      byte = 'o'
	KindSettings  byte = 'c'
	KindIndexes   byte = 'i'
	KindCounters  byte = 'n'
	KindOther     byte = '?'
)

// BackupKinds names the record kinds.
var BackupKinds = map[byte]string{
	KindJobs: "jobs", KindQueues: "queues", KindSchedules: "schedules", KindBatches: "batches",
	KindLocks: "locks", KindBulk: "bulk_operations", KindSettings: "settings", KindIndexes: "indexes",
	KindCounters: "counters", KindOther: "other",
}

// BackupKind is the record kind of a key relative to a namespace.
func BackupKind(rel []byte) byte {
	if engine.IsJobKey(rel) {
		return KindJobs
	}
	if len(rel) == 0 {
		return KindOther
	}
	switch rel[0] {
	case keys.KindQueue:
		return KindQueues
	case keys.KindSchedule:
		return KindSchedules
	case keys.KindBatch:
		return KindBatches
	case keys.KindUnique:
		return KindLocks
	case keys.KindBulkOp:
		return KindBulk
	case keys.KindNamespaceConfig:
		return KindSettings
	case keys.KindKeyActive, keys.KindUnfinished:
		return KindCounters
	case keys.KindPending, keys.KindDue, keys.KindLease, keys.KindExpire, keys.KindScheduleName, keys.KindScheduleQueueName, keys.KindScheduleRun,
		keys.KindPrune, keys.KindDead, keys.KindBatchMember, keys.KindDependent, keys.KindStateIndex, keys.KindTag,
		keys.KindBatchIndex, keys.KindChainStep, keys.KindRecordPrune, keys.KindKeyedPending, keys.KindKeyedGroup:
		return KindIndexes
	}
	return KindOther
}

// writeKept writes r to a backup or move stream unless it is of the
// namespace's event log, which stays with its shard: its sequence numbers
// are that shard's Raft indexes, meaningless in another log, and a
// restore or a move wipes the target's log and raises its floor, so a
// stream resuming across either is told it missed events.
func writeKept(bw *backup.Writer, r backup.Record) error {
	if keys.IsEvent(r.Key) {
		return nil
	}
	return bw.Write(r)
}

// BackupSource says where a backup is taken, for its header.
type BackupSource struct {
	ShardID string
	Now     time.Time
}

// Backup writes namespace ns as a backup stream to w, from one snapshot
// of the node's state, and returns its manifest.
func (s *Service) Backup(ns string, src BackupSource, w io.Writer) (backup.Manifest, error) {
	if err := namespaceOK(ns); err != nil {
		return backup.Manifest{}, err
	}
	snap := s.node.DB().NewSnapshot()
	defer snap.Close()
	return s.writeSnapshot(ns, snap, src, w)
}

// restoreChunkBytes bounds the records of one RestoreChunk entry.
const restoreChunkBytes = 1 << 20

// Restore replaces (replace) or fills (a new namespace) ns with the
// backup stream body. The stream is spooled to a file and verified whole
// first, so a corrupt or truncated one changes nothing (400); then it is
// written through Raft in chunks between RestoreBegin and RestoreEnd, and
// a failure between them aborts, deleting what was written.
func (s *Service) Restore(ctx context.Context, ns string, replace bool, body io.Reader) (wire.RestoreResult, error) {
	if err := namespaceOK(ns); err != nil {
		return wire.RestoreResult{}, err
	}
	if !replace && s.HasData(ns) {
		if _, interrupted := engine.RestoreMarker(s.node.DB(), ns); !interrupted {
			return wire.RestoreResult{}, apierr.New(apierr.Conflict, "the namespace already holds data: restore into a new namespace, or replace it")
		}
	}
	f, err := os.CreateTemp("", "jobbie-restore-*")
	if err != nil {
		return wire.RestoreResult{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := io.Copy(f, body); err != nil {
		return wire.RestoreResult{}, apierr.New(apierr.BadRequest, "reading the backup stream: %v", err)
	}
	// Pass 1: verify the whole stream.
	res, err := readBackup(f, nil)
	if err != nil {
		return wire.RestoreResult{}, err
	}
	// Pass 2: write it.
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	s.driving.Store(token, struct{}{})
	defer s.driving.Delete(token)
	if _, err := engine.RestoreBegin.Propose(ctx, s.node, &engine.RestoreBeginCmd{NS: ns, Token: token, Replace: replace}); err != nil {
		return wire.RestoreResult{}, err
	}
	abort := func(cause error) (wire.RestoreResult, error) {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := engine.RestoreAbort.Propose(actx, s.node, &engine.RestoreTokenCmd{NS: ns, Token: token}); err != nil {
			s.cfg.Logger.Warn("shard: restore abort failed; the namespace stays restoring until restored again or deleted", "ns", ns, "err", err)
		}
		return wire.RestoreResult{}, cause
	}
	chunk := &engine.RestoreChunkCmd{NS: ns, Token: token}
	size := 0
	flush := func() error {
		if len(chunk.Recs) == 0 {
			return nil
		}
		_, err := engine.RestoreChunk.Propose(ctx, s.node, chunk)
		chunk.Recs, size = chunk.Recs[:0], 0
		return err
	}
	if _, err := readBackup(f, func(r backup.Record) error {
		chunk.Recs = append(chunk.Recs, engine.RestoreRecord{Key: r.Key, Value: r.Value})
		if size += len(r.Key) + len(r.Value) + 16; size >= restoreChunkBytes {
			return flush()
		}
		return nil
	}); err != nil {
		return abort(err)
	}
	if err := flush(); err != nil {
		return abort(err)
	}
	if _, err := engine.RestoreEnd.Propose(ctx, s.node, &engine.RestoreTokenCmd{NS: ns, Token: token}); err != nil {
		return abort(err)
	}
	return res, nil
}

// readBackup reads the stream in f from its start to its verified end,
// handing each record to fn (if any), and counts what it holds.
func readBackup(f *os.File, fn func(backup.Record) error) (wire.RestoreResult, error) {
	var res wire.RestoreResult
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, err
	}
	r, err := backup.NewReader(f)
	if err != nil {
		return res, apierr.New(apierr.BadRequest, "not a usable backup stream: %v", err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, apierr.New(apierr.BadRequest, "the backup stream failed verification: %v", err)
		}
		if len(rec.Key) == 0 {
			return res, apierr.New(apierr.BadRequest, "the backup stream holds a record with an empty key (record %d)", res.Records+1)
		}
		res.Records++
		switch BackupKind(rec.Key) {
		case KindJobs:
			res.Jobs++
		case KindQueues:
			res.Queues++
		case KindSchedules:
			res.Schedules++
		}
		if fn != nil {
			if err := fn(rec); err != nil {
				return res, err
			}
		}
	}
}

// Driving reports whether this node's Restore is writing the restore with
// token: the leader's sweep leaves it alone however slow its chunks.
func (s *Service) Driving(token string) bool {
	_, ok := s.driving.Load(token)
	return ok
}

// HasData reports whether ns holds anything on this node.
func (s *Service) HasData(ns string) bool { return engine.HasData(s.node.DB(), ns) }

// Restoring reports whether a restore holds ns, as last committed: a
// memory read (engine.Engine.Restoring), asked on every /api/v1 request.
func (s *Service) Restoring(ns string) bool { return s.eng.Restoring(s.node.DB(), ns) }
