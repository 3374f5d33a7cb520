package engine

import (
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// A namespace's encryption at rest (keys.Encryption). The service makes
// and wraps every key on the leader (shard/envelope) and proposes the
// whole record; the apply only stores it, so it never sees a key in the
// clear and stays deterministic. The record lies under the namespace's
// prefix: a backup, a move and a purge take it with the jobs it opens.

// EncryptionRecord is a namespace's encryption settings and its keys, each
// only ever wrapped: the data key by the namespace key; the namespace key
// by the operator's master key, or, while the tenant supplies one, by the
// tenant's key, itself wrapped by the master key.
type EncryptionRecord struct {
	// Enabled seals new values; values sealed earlier open while their
	// generation's keys are kept, whatever it says.
	Enabled bool `codec:"on,omitempty"`
	// SearchDecrypt lets a search over payloads open them while it scans.
	SearchDecrypt bool `codec:"sd,omitempty"`
	// Version counts the changes; a change names the version it read.
	Version int64 `codec:"v"`
	// Keyspace is a random name made with the first keys: every wrapped
	// key and sealed value is bound to it rather than to the namespace's
	// name, so a restore into another namespace still opens them.
	Keyspace string `codec:"ks,omitempty"`
	// Gen is the data key's generation, named by every value it seals; a
	// revoke ends a generation, and the next key supplied starts another.
	Gen         uint32 `codec:"g"`
	DataKey     []byte `codec:"dk,omitempty"`
	NSKeyMaster []byte `codec:"nm,omitempty"`
	NSKeyTenant []byte `codec:"nt,omitempty"`
	TenantKey   []byte `codec:"tk,omitempty"`
	TenantKeyID string `codec:"ti,omitempty"`
	// Revoked is every generation whose keys a revoke deleted, with the
	// tenant key it named, so a value of one is refused by name.
	Revoked   []RevokedKey `codec:"rv,omitempty"`
	UpdatedAt int64        `codec:"ua"`
}

// RevokedKey is a generation ended by the revoke of the tenant key KeyID
// at At (unix ns).
type RevokedKey struct {
	Gen   uint32 `codec:"g"`
	KeyID string `codec:"k"`
	At    int64  `codec:"a"`
}

// EncryptionCmd replaces a namespace's record with Record, if its version
// is still Prev (0: none yet).
type EncryptionCmd struct {
	NS     string           `codec:"ns"`
	Prev   int64            `codec:"p"`
	Record EncryptionRecord `codec:"r"`
}

func (c *EncryptionCmd) namespace() string { return c.NS }

func (e *Engine) applyEncryption(tx *replica.Tx, c *EncryptionCmd) (*EncryptionRecord, error) {
	old, _ := ReadEncryption(tx, c.NS)
	if old.Version != c.Prev {
		return nil, apierr.New(apierr.Conflict, "the namespace's encryption settings changed meanwhile (version %d, not %d): read them and try again", old.Version, c.Prev)
	}
	r := c.Record
	r.Version, r.UpdatedAt = c.Prev+1, tx.Now.UnixNano()
	registerNamespace(tx, c.NS)
	must(tx.Set(keys.Encryption(c.NS), replica.Encode(&r), nil))
	e.encryptionChanged(tx)
	return &r, nil
}

// ReadEncryption returns ns's encryption record as last applied in rd;
// ok is false when the namespace never set one (a zero record).
func ReadEncryption(rd pebble.Reader, ns string) (rec EncryptionRecord, ok bool) {
	v, closer, err := rd.Get(keys.Encryption(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return rec, false
	}
	must(err)
	defer closer.Close()
	must(replica.Decode(v, &rec))
	return rec, true
}

// EncryptionEpoch counts the commits that may have changed any
// namespace's encryption record (a change, a purge, a restore, a move, a
// snapshot installed), on this node; 0 while one is committing. What a
// caller read of a record after loading a nonzero epoch is current while
// the epoch has not moved. The count moves after the commit, so a record
// read before it was read under the old epoch; and the epoch is 0 from
// before the commit until it is counted, since a reader may learn of the
// commit in between (the replica wakes those waiting on the applied index
// before the functions that run after the commit): such a reader reads
// the record and keeps nothing. Safe from any goroutine.
func (e *Engine) EncryptionEpoch() uint64 {
	if e.encBusy.Load() > 0 { // before the count: a commit counted since moved it
		return 0
	}
	return e.encEpoch.Load() + 1
}

// encryptionChanged marks the epoch changing before tx's batch commits,
// and moves it once the batch has committed. A refused command's
// functions go together, so the two always pair.
func (e *Engine) encryptionChanged(tx *replica.Tx) {
	tx.BeforeCommit(func() { e.encBusy.Add(1) })
	tx.AfterCommit(func() {
		e.encEpoch.Add(1)
		e.encBusy.Add(-1)
	})
}

// ReadEncryptionRaw returns the stored bytes of ns's record (nil when it
// has none): what the service keys its cache of opened keys by.
func ReadEncryptionRaw(rd pebble.Reader, ns string) []byte {
	v, closer, err := rd.Get(keys.Encryption(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	must(err)
	defer closer.Close()
	return append([]byte(nil), v...)
}
