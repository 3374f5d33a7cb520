package wire

import (
	"fmt"
	"time"
)

// Idempotent writes: a creating request may carry an Idempotency-Key; the
// shard (or control, for the creates it serves) keeps the first answer
// for IdempotencyTTL and gives it back to a repeat of the same request
// (docs/api/README.md, "Idempotency").
const (
	// IdempotencyKeyHeader names the request's key: 1 to
	// MaxIdempotencyKeyBytes printable ASCII bytes.
	IdempotencyKeyHeader = "Idempotency-Key"
	// IdempotencyReplayedHeader is "true" on an answer given back from an
	// earlier request with the same key.
	IdempotencyReplayedHeader = "Idempotency-Replayed"

	MaxIdempotencyKeyBytes = 255
	// IdempotencyTTL is how long a key's first answer is kept.
	IdempotencyTTL = 24 * time.Hour
	// MaxIdempotencyRecords bounds the records one namespace keeps; past
	// it the one that expires first is forgotten early.
	MaxIdempotencyRecords = 100_000
	// MaxTenantIdempotencyRecords bounds the records control keeps of one
	// tenant's creates (namespaces, keys, roles, backups); past it the
	// one that expires first is forgotten early.
	MaxTenantIdempotencyRecords = 1_000
)

// IdempotentRoutes are the POST paths that take an Idempotency-Key; every
// other route refuses one (400 naming the header) rather than ignore it.
// The first four are a shard's, which keeps their records; the others
// the gateway serves through control, which keeps theirs per tenant.
var IdempotentRoutes = map[string]bool{
	"/api/v1/enqueue":       true,
	"/api/v1/enqueue/batch": true,
	"/api/v1/schedules":     true,
	"/api/v1/webhooks":      true,
	"/api/v1/namespaces":    true,
	"/api/v1/keys":          true,
	"/api/v1/roles":         true,
	"/api/v1/backups":       true,
}

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
