package wire

import (
	"encoding/json"
	"time"
)

// Signing keys, for the operator on the control plane:
// GET /control/v1/signing-keys and POST /control/v1/signing-keys/rotate.

// MaxRetireAfter bounds how long a replaced signing key may keep
// verifying the API keys it signed.
const MaxRetireAfter = 365 * 24 * time.Hour

// DefaultRetireAfter is a rotation's retire_after when the body names none.
const DefaultRetireAfter = 24 * time.Hour

// SigningKey describes one key that signs API keys (never its private
// half). Current is the one that signs new keys; RetiresAt, set once a
// rotation replaced it, is when it leaves the JWKS and the keys it signed
// stop verifying; Retired is true from then on.
type SigningKey struct {
	Kid       string     `json:"kid"`
	CreatedAt time.Time  `json:"created_at"`
	RetiresAt *time.Time `json:"retires_at,omitempty"`
	Current   bool       `json:"current"`
	Retired   bool       `json:"retired"`
}

// SigningKeyList is GET /control/v1/signing-keys, oldest first.
type SigningKeyList struct {
	SigningKeys []SigningKey `json:"signing_keys"`
}

// RotateSigningKeyRequest is POST /control/v1/signing-keys/rotate (the
// body may be empty). RetireAfter ("24h", or a number of seconds; 0 to
// MaxRetireAfter, default DefaultRetireAfter) is how long the replaced
// key keeps verifying the API keys it signed.
type RotateSigningKeyRequest struct {
	RetireAfter json.RawMessage `json:"retire_after,omitempty"`
}

// RotatedSigningKeys answers a rotation: every signing key after it, and
// the calling operator key signed again by the new current key (the same
// key id), to use once the old signing key retires.
type RotatedSigningKeys struct {
	SigningKeyList
	OperatorKey string `json:"operator_key"`
}
