package engine

import (
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/shard/keys"
)

// A namespace's webhook signing keys (keys.SigningKeys): the Ed25519 keys
// its push deliveries are signed with. The leader makes a key (the state
// machine draws no randomness) and proposes it; the apply adds it by
// whsign's rotation rule at the entry's clock.

// SigningKey is one stored key: its secret serialization (whsign.Key.Secret).
type SigningKey struct {
	ID       string `codec:"i"`
	Secret   string `codec:"s"`
	NotAfter int64  `codec:"na,omitempty"` // unix ns; the end of its rotation overlap
}

// SigningKeySet is the record: oldest key first.
type SigningKeySet struct {
	Keys []SigningKey `codec:"k"`
}

// SigningKeysCmd adds Key to the namespace's set. First: only if the set
// is empty (the first use of push made it); the others' overlap is
// OverlapNs.
type SigningKeysCmd struct {
	NS        string     `codec:"ns"`
	Key       SigningKey `codec:"key"`
	OverlapNs int64      `codec:"o,omitempty"`
	First     bool       `codec:"f,omitempty"`
}

func (c *SigningKeysCmd) namespace() string { return c.NS }

// applySigningKeys adds the key and answers the set as stored.
func (e *Engine) applySigningKeys(tx *replica.Tx, c *SigningKeysCmd) (*SigningKeySet, error) {
	cur := ReadSigningKeys(tx, c.NS)
	if c.First && len(cur.Keys) > 0 {
		return cur, nil
	}
	set, err := cur.KeySet()
	if err != nil {
		return nil, err
	}
	k, err := whsign.ParseKey(c.Key.ID, c.Key.Secret)
	if err != nil || k.Scheme() != whsign.Ed25519 {
		return nil, apierr.New(apierr.BadRequest, "signing key: not an Ed25519 key")
	}
	set = set.Rotate(k, tx.Now, time.Duration(c.OverlapNs))
	out := &SigningKeySet{Keys: make([]SigningKey, len(set))}
	for i, k := range set {
		out.Keys[i] = SigningKey{ID: k.ID, Secret: k.Secret()}
		if !k.NotAfter.IsZero() {
			out.Keys[i].NotAfter = k.NotAfter.UnixNano()
		}
	}
	registerNamespace(tx, c.NS)
	must(tx.Set(keys.SigningKeys(c.NS), replica.Encode(out), nil))
	return out, nil
}

// ReadSigningKeys returns ns's signing keys as last applied in r (none
// when it has none yet).
func ReadSigningKeys(r pebble.Reader, ns string) *SigningKeySet {
	out := &SigningKeySet{}
	v, closer, err := r.Get(keys.SigningKeys(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return out
	}
	must(err)
	defer closer.Close()
	must(replica.Decode(v, out))
	return out
}

// KeySet is the record as whsign keys.
func (s *SigningKeySet) KeySet() (whsign.KeySet, error) {
	set := make(whsign.KeySet, 0, len(s.Keys))
	for _, sk := range s.Keys {
		k, err := whsign.ParseKey(sk.ID, sk.Secret)
		if err != nil {
			return nil, err
		}
		if sk.NotAfter != 0 {
			k.NotAfter = time.Unix(0, sk.NotAfter).UTC()
		}
		set = append(set, k)
	}
	return set, nil
}
