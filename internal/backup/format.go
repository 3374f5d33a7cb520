// Package backup is the namespace backup format and the stores that keep
// backups: a versioned, compressed, checksummed stream of key/value records
// (keys relative to the namespace, so a backup restores into any namespace)
// closed by a manifest, and a Store (a directory or an S3 bucket) that keeps
// each stream with its manifest beside it as JSON, so a catalog can list
// backups without reading their data. docs/BACKUP-FORMAT.md is the format,
// byte by byte.
package backup

import (
	"errors"
	"fmt"
	"time"
)

// FormatVersion is the version this package writes and the only one it
// reads. A reader meeting another version refuses the stream.
const FormatVersion = 1

// Magic opens every uncompressed stream.
const Magic = "JBBACKUP"

// Limits on what a stream may hold. The writer refuses more, and the reader
// treats a length above them as corruption, so a forged length can never make
// it allocate more than the stream really carries.
const (
	MaxKeyLen     = 64 << 10 // a Pebble key relative to its namespace
	MaxValueLen   = 16 << 20 // a job record with a full payload and result fits many times over
	MaxHeaderLen  = 1 << 20  // header JSON
	MaxTrailerLen = 1 << 20  // manifest JSON
	MaxKindName   = 64
)

// Frame tags in the record section.
const (
	tagRecord  byte = 'r'
	tagTrailer byte = 'm'
)

// ErrCorrupt is wrapped by every error the Reader returns for a stream that
// is truncated, damaged or not a backup.
var ErrCorrupt = errors.New("backup: corrupt or truncated stream")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// Header is what a backup knows before its first record: where and when the
// snapshot was taken, and the caller's names for its record kinds.
type Header struct {
	Tenant    string    `json:"tenant"`
	Namespace string    `json:"namespace"`
	ShardID   string    `json:"shard_id"`
	RaftIndex uint64    `json:"raft_index"` // the Raft index the snapshot was taken at
	CreatedAt time.Time `json:"created_at"` // when the snapshot was taken
	// Kinds names each kind byte a record may carry (e.g. 'j': "jobs"). A
	// record of an undeclared kind is refused; the manifest counts records
	// by these names.
	Kinds map[byte]string `json:"kinds"`
	// Delta marks a stream of changes since an earlier snapshot of the
	// same namespace rather than all of it: its records are set over what
	// the earlier one had, and its KindDelete records remove keys. A full
	// backup omits it (and stays byte for byte as before).
	Delta bool `json:"delta,omitempty"`
}

// KindDelete is the record kind of a delta stream's deletions: the key
// the namespace no longer holds, with an empty value. A delta stream
// declares it as KindDeleteName; any other stream may not declare it.
const (
	KindDelete     byte = '-'
	KindDeleteName      = "deletes"
)

func (h Header) validate() error {
	if len(h.Kinds) == 0 {
		return errors.New("backup: header declares no record kinds")
	}
	if name, ok := h.Kinds[KindDelete]; ok != h.Delta || ok && name != KindDeleteName {
		return fmt.Errorf("backup: kind %q is %q in a delta stream and absent from any other", KindDelete, KindDeleteName)
	}
	seen := make(map[string]bool, len(h.Kinds))
	for code, name := range h.Kinds {
		if name == "" || len(name) > MaxKindName {
			return fmt.Errorf("backup: kind %q: name must be 1-%d bytes", code, MaxKindName)
		}
		if seen[name] {
			return fmt.Errorf("backup: kind name %q declared twice", name)
		}
		seen[name] = true
	}
	return nil
}

// Record is one key/value pair of the namespace. Key is relative to the
// namespace (its prefix removed).
type Record struct {
	Kind  byte
	Key   []byte
	Value []byte
}

// Manifest describes a finished backup. The writer puts it at the end of the
// stream; a Store keeps it as JSON beside the data too.
type Manifest struct {
	// ID is the backup's id in its store; set by Store.Put, empty in a
	// stream's own trailer.
	ID            string    `json:"id,omitempty"`
	FormatVersion int       `json:"format_version"`
	Tenant        string    `json:"tenant"`
	Namespace     string    `json:"namespace"`
	ShardID       string    `json:"shard_id"`
	RaftIndex     uint64    `json:"raft_index"`
	CreatedAt     time.Time `json:"created_at"`
	// Delta repeats the header's: the stream holds changes, not a whole
	// namespace.
	Delta bool `json:"delta,omitempty"`
	// Counts has one entry per declared kind name, zeros included.
	Counts  map[string]uint64 `json:"counts"`
	Records uint64            `json:"records"`
	// Bytes and SHA256 cover the uncompressed stream from the magic through
	// the last record frame: everything before the trailer.
	Bytes  uint64 `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Labels are the caller's, given at Close (e.g. what triggered it).
	Labels map[string]string `json:"labels,omitempty"`
	// StoredBytes is the compressed size in the store; set by Store.Put.
	StoredBytes int64 `json:"stored_bytes,omitempty"`
}
