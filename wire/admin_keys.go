package wire

import (
	"encoding/json"
	"time"
)

// API keys beyond create, list and revoke: GET /api/v1/keys/{id} and
// POST /api/v1/keys/{id}/rotate.

// MaxGracePeriod bounds a rotation's grace period.
const MaxGracePeriod = 7 * 24 * time.Hour

// RotateKeyRequest is POST /api/v1/keys/{id}/rotate (the body may be
// empty). GracePeriod is how long the secret being replaced keeps
// working: a duration ("1h", or a number of seconds) from 0 (the
// default: it stops at once) to MaxGracePeriod.
type RotateKeyRequest struct {
	GracePeriod json.RawMessage `json:"grace_period,omitempty"`
}

// RotatedKey answers a rotation: the key with its new secret (Token),
// shown this once, and until when the secret it replaced keeps working
// (PreviousKeyValidUntil; the rotation time when the grace period is 0).
type RotatedKey struct {
	Key
	Token                 string    `json:"key"`
	PreviousKeyValidUntil time.Time `json:"previous_key_valid_until"`
}
