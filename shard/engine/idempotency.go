package engine

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Idempotent writes. A creating request with an Idempotency-Key is
// proposed as IdemApply wrapping its own command: the apply looks the key
// up, and either gives back the first answer (same request) or refuses
// (another request), or applies the wrapped command and stores its result
// in the same batch, so no entry ever holds the change without the record
// or the record without the change, on any node, after any leader change.
// Commands apply one at a time, so a repeat proposed while the first is
// still in flight finds the record its first left.

// IdemCmd wraps a creating command under an Idempotency-Key.
type IdemCmd struct {
	NS   string `codec:"ns"`
	Key  string `codec:"k"`
	Hash []byte `codec:"h"` // the request's hash: method, path, body
	Echo []byte `codec:"e"` // what the proposer's answer needs beyond the result (a batch's id, a secret), kept for a replay
	Cmd  []byte `codec:"c"` // the wrapped command: its type, then its payload
}

func (c *IdemCmd) namespace() string { return c.NS }

// IdemOutcome is the answer of an IdemApply: the wrapped command's result
// (encoded) and the echo, from this apply or from the first one.
type IdemOutcome struct {
	Replayed bool
	Result   []byte
	Echo     []byte
}

// IdemRecord is a key's stored record.
type IdemRecord struct {
	Hash    []byte `codec:"h"`
	Expires int64  `codec:"x"` // entry clock, ns
	Result  []byte `codec:"r"`
	Echo    []byte `codec:"e"`
}

// IdemSweepCmd deletes the records of the expiry index entries named,
// those due by the entry's clock (the leader's sweep proposes it).
type IdemSweepCmd struct {
	NS    string     `codec:"ns"`
	Items []IdemItem `codec:"i"`
}

func (c *IdemSweepCmd) namespace() string { return c.NS }

// IdemItem is one entry of the expiry index.
type IdemItem struct {
	At  int64  `codec:"at"`
	Key string `codec:"k"`
}

// idemWraps lists the commands a request's key may wrap: the creating
// ones whose result is the whole of the answer with the echo.
var idemWraps = map[replica.CommandType]bool{
	Enqueue.Type: true, EnqueueTraced.Type: true, EnqueueSchema.Type: true,
	ScheduleCreate.Type: true, ScheduleCreateDefaults.Type: true, ScheduleCreateQueueNames.Type: true,
	WebhookCreate.Type: true,
}

func (e *Engine) applyIdem(tx *replica.Tx, c *IdemCmd) (*IdemOutcome, error) {
	if len(c.Cmd) == 0 || !idemWraps[replica.CommandType(c.Cmd[0])] {
		return nil, apierr.New(apierr.BadRequest, "this request does not take an %s", wire.IdempotencyKeyHeader)
	}
	now := tx.Now.UnixNano()
	rec, found := readIdem(tx, c.NS, c.Key)
	if found && rec.Expires > now {
		if !bytes.Equal(rec.Hash, c.Hash) {
			return nil, apierr.OfField(apierr.IdempotencyKeyReused, wire.IdempotencyKeyHeader,
				"this %s was used for another request (method, path or body) within the last %s; use a new key for a new request",
				wire.IdempotencyKeyHeader, wire.IdempotencyTTL)
		}
		return &IdemOutcome{Replayed: true, Result: rec.Result, Echo: rec.Echo}, nil
	}
	res, err := e.reg.Apply(tx, c.Cmd)
	if err != nil {
		return nil, err // a refusal keeps no record: the request may be sent again
	}
	n := idemCount(tx, c.NS)
	if found {
		must(tx.Delete(keys.IdempotencyExpiry(c.NS, rec.Expires, c.Key), nil)) // expired, not yet swept
		n--
	}
	out := &IdemRecord{Hash: c.Hash, Expires: now + int64(e.idemTTL), Result: replica.Encode(res), Echo: c.Echo}
	must(tx.Set(keys.Idempotency(c.NS, c.Key), replica.Encode(out), nil))
	must(tx.Set(keys.IdempotencyExpiry(c.NS, out.Expires, c.Key), nil, nil))
	n++
	for n > e.idemMax && e.evictOldestIdem(tx, c.NS) {
		n--
	}
	setIdemCount(tx, c.NS, n)
	return &IdemOutcome{Result: out.Result, Echo: out.Echo}, nil
}

// evictOldestIdem forgets ns's record that expires first, the namespace
// being over its bound.
func (e *Engine) evictOldestIdem(tx *replica.Tx, ns string) bool {
	p := keys.IdempotencyExpiryIndex(ns)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	if !it.First() {
		return false
	}
	_, key, err := keys.ParseIdempotencyExpiry(ns, it.Key())
	must(err)
	must(tx.Delete(append([]byte(nil), it.Key()...), nil))
	must(tx.Delete(keys.Idempotency(ns, key), nil))
	return true
}

func (e *Engine) applyIdemSweep(tx *replica.Tx, c *IdemSweepCmd) (int, error) {
	now := tx.Now.UnixNano()
	n, deleted := idemCount(tx, c.NS), 0
	for _, it := range c.Items {
		k := keys.IdempotencyExpiry(c.NS, it.At, it.Key)
		if it.At > now || !exists(tx, k) {
			continue
		}
		must(tx.Delete(k, nil))
		must(tx.Delete(keys.Idempotency(c.NS, it.Key), nil))
		deleted++
	}
	if deleted > 0 {
		setIdemCount(tx, c.NS, n-int64(deleted))
	}
	return deleted, nil
}

func readIdem(r pebble.Reader, ns, key string) (*IdemRecord, bool) {
	v, closer, err := r.Get(keys.Idempotency(ns, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false
	}
	must(err)
	defer closer.Close()
	rec := new(IdemRecord)
	must(replica.Decode(v, rec))
	return rec, true
}

func idemCount(r pebble.Reader, ns string) int64 {
	v, closer, err := r.Get(keys.IdempotencyCount(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0
	}
	must(err)
	defer closer.Close()
	return int64(binary.BigEndian.Uint64(v))
}

func setIdemCount(tx *replica.Tx, ns string, n int64) {
	if n <= 0 {
		must(tx.Delete(keys.IdempotencyCount(ns), nil))
		return
	}
	must(tx.Set(keys.IdempotencyCount(ns), binary.BigEndian.AppendUint64(nil, uint64(n)), nil))
}

// IdemRecordOf reads ns's record of key from r (tests, the API's reads).
func IdemRecordOf(r pebble.Reader, ns, key string) (*IdemRecord, bool) { return readIdem(r, ns, key) }

// IdemReplays reports whether a request of hash under key would be
// answered, at now, by the record of its first (a read of the node's own
// state, for a proposer deciding what to check).
func IdemReplays(r pebble.Reader, ns, key string, hash []byte, now int64) bool {
	rec, ok := readIdem(r, ns, key)
	return ok && rec.Expires > now && bytes.Equal(rec.Hash, hash)
}
