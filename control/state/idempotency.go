package state

import (
	"bytes"
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Idempotent creates. A tenant's creating request with an Idempotency-Key
// is proposed as OpIdempotent wrapping its own command: the apply looks
// the key up and gives back the first answer (the same request) or
// refuses (another request), or applies the wrapped command and keeps its
// result in the same batch. No entry holds the create without its record
// or the record without the create, on any node, after any leader change;
// entries apply one at a time, so a repeat finds what its first left.

// IdemCmd wraps a creating command of tenant TenantID under an
// Idempotency-Key.
type IdemCmd struct {
	TenantID string `json:"tenant_id"`
	Key      string `json:"key"`
	Hash     []byte `json:"hash"` // the request's hash (method, path, body), compared on a repeat
	Cmd      []byte `json:"cmd"`  // the wrapped command: its type, then its payload
}

// IdemOutcome is an OpIdempotent's answer: the wrapped command's result
// (encoded), from this apply or, Replayed, from the first.
type IdemOutcome struct {
	Replayed bool   `json:"replayed"`
	Result   []byte `json:"result"`
}

// idemRecord is a key's stored record: the first request's hash and the
// wrapped command's result, nothing else (a key's token is signed again
// from it, never stored: docs/api/README.md, "Idempotency").
type idemRecord struct {
	Hash    []byte `json:"hash"`
	Expires int64  `json:"expires"` // entry clock, unix ns
	Result  []byte `json:"result"`
}

// idemWraps are the commands a key may wrap: the tenant-facing creates
// whose answer the proposer rebuilds from their result alone.
var idemWraps = map[replica.CommandType]bool{
	OpCreateNamespace.Type: true,
	OpCreateKey.Type:       true,
	OpPutRole.Type:         true,
	OpStartBackup.Type:     true,
}

// Wraps reports whether an Idempotency-Key may wrap commands of type t.
func Wraps(t replica.CommandType) bool { return idemWraps[t] }

// idemLimits are what applyIdem keeps: records per tenant, and how long.
type idemLimits struct {
	max int64
	ttl time.Duration
}

var defaultIdemLimits = idemLimits{max: wire.MaxTenantIdempotencyRecords, ttl: wire.IdempotencyTTL}

// applyIdem applies c under lim with the handlers of reg. A tenant's
// records expired by the entry's clock are deleted first (they are
// forgotten as the tenant writes new ones, with no sweep of their own),
// and past lim.max the record expiring first is forgotten early.
func applyIdem(reg *replica.Registry, lim idemLimits, tx *replica.Tx, c *IdemCmd) (*IdemOutcome, error) {
	if len(c.Cmd) == 0 || !idemWraps[replica.CommandType(c.Cmd[0])] {
		return nil, apierr.Field(wire.IdempotencyKeyHeader, "this request does not take an %s", wire.IdempotencyKeyHeader)
	}
	now := tx.Now.UnixNano()
	var rec idemRecord
	found := must(getMsgpack(tx, layout.Idem(c.TenantID, c.Key), &rec))
	if found && rec.Expires > now {
		if !bytes.Equal(rec.Hash, c.Hash) {
			return nil, apierr.OfField(apierr.IdempotencyKeyReused, wire.IdempotencyKeyHeader,
				"this %s was used for another request (method, path or body) within the last %s; use a new key for a new request",
				wire.IdempotencyKeyHeader, wire.IdempotencyTTL)
		}
		return &IdemOutcome{Replayed: true, Result: rec.Result}, nil
	}
	res, err := reg.Apply(tx, c.Cmd)
	if err != nil {
		return nil, err // a refusal keeps no record: the request may be sent again
	}
	n := int64(must(getUint64(tx, layout.IdemCount(c.TenantID))))
	n -= dropIdem(tx, c.TenantID, func(at int64, _ string) bool { return at <= now }) // the expired one of this key among them
	out := idemRecord{Hash: c.Hash, Expires: now + int64(lim.ttl), Result: replica.Encode(res)}
	mustSet(tx, layout.Idem(c.TenantID, c.Key), replica.Encode(&out))
	mustSet(tx, layout.IdemExpiry(c.TenantID, out.Expires, c.Key), nil)
	n++
	if over := n - lim.max; over > 0 {
		n -= dropIdem(tx, c.TenantID, func(int64, string) bool { over--; return over >= 0 })
	}
	if n > 0 {
		mustSet(tx, layout.IdemCount(c.TenantID), layout.Uint64(uint64(n)))
	} else {
		mustDelete(tx, layout.IdemCount(c.TenantID))
	}
	return &IdemOutcome{Result: out.Result}, nil
}

// dropIdem deletes tenant tid's records from the one expiring first for
// as long as drop says so, and returns how many it deleted.
func dropIdem(tx *replica.Tx, tid string, drop func(at int64, key string) bool) int64 {
	p := layout.IdemExpiries(tid)
	var gone [][]byte
	var keys []string
	err := scan(tx, p, func(k, _ []byte) error {
		at, key, err := layout.ParseIdemExpiry(tid, k)
		if err != nil {
			return err
		}
		if !drop(at, key) {
			return errStopScan
		}
		gone = append(gone, bytes.Clone(k))
		keys = append(keys, key)
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		panic(err)
	}
	for i, k := range gone {
		mustDelete(tx, k)
		mustDelete(tx, layout.Idem(tid, keys[i]))
	}
	return int64(len(gone))
}

// errStopScan ends a scan early.
var errStopScan = errors.New("scan stopped")

// getMsgpack decodes the record at k (the replica's encoding) into v and
// reports whether it existed.
func getMsgpack(r pebble.Reader, k []byte, v any) (bool, error) {
	b, ok, err := getRaw(r, k)
	if err != nil || !ok {
		return false, err
	}
	return true, replica.Decode(b, v)
}

// IdemKeys is how many Idempotency-Key records tenant tid keeps (tests).
func IdemKeys(r pebble.Reader, tid string) (uint64, error) {
	return getUint64(r, layout.IdemCount(tid))
}
