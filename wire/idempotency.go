package wire

import (
	"fmt"
	"time"
)

// Idempotent writes: a creating request may carry an Idempotency-Key; the
// shard keeps the first answer for IdempotencyTTL and gives it back to a
// repeat of the same request (docs/api/README.md, "Idempotency").
const (
	// IdempotencyKeyHeader names the request's key: 1 to
	// MaxIdempotencyKeyBytes printable ASCII bytes.
	IdempotencyKeyHeader = "Idempotency-Key"
	// IdempotencyReplayedHeader is "true" on an answer given back from an
	// earlier request with the same key.
	IdempotencyReplayedHeader = "Idempotency-Replayed"
	// IdempotencyHashHeader carries the hash of the request a key is for
	// (method, path and body, hex) from the shard API that read the body
	// to the node that applies it; internal.
	IdempotencyHashHeader = "X-Jobbie-Idempotency-Hash"

	MaxIdempotencyKeyBytes = 255
	// IdempotencyTTL is how long a key's first answer is kept.
	IdempotencyTTL = 24 * time.Hour
	// MaxIdempotencyRecords bounds the records one namespace keeps; past
	// it the one that expires first is forgotten early.
	MaxIdempotencyRecords = 100_000
)

// CodeIdempotencyKeyReused (422) answers a key sent again with a
// different request (method, path or body) while its first is kept.
const CodeIdempotencyKeyReused ErrorCode = "idempotency_key_reused"

// CheckIdempotencyKey reports what is wrong with an Idempotency-Key's
// value, or nil.
func CheckIdempotencyKey(k string) error {
	if k == "" || len(k) > MaxIdempotencyKeyBytes {
		return fmt.Errorf("%s must be 1 to %d bytes; got %d", IdempotencyKeyHeader, MaxIdempotencyKeyBytes, len(k))
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return fmt.Errorf("%s must be printable ASCII; byte %d is 0x%02x", IdempotencyKeyHeader, i, k[i])
		}
	}
	return nil
}
