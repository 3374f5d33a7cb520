package wire

import "time"

// EncryptionRequest is PUT /api/v1/encryption: a namespace's encryption at
// rest of its jobs' payloads, results, checkpoints and error texts. Fields
// left out keep their value. TenantKey is write-only: no answer, log or
// audit record ever holds it.
type EncryptionRequest struct {
	// Enabled seals what new jobs store; false stops sealing (what was
	// sealed stays readable while its key is kept).
	Enabled *bool `json:"enabled,omitempty"`
	// SearchDecrypt lets a search with payload_contains or payload_jq
	// open payloads while it scans; without it such a search is refused.
	SearchDecrypt *bool `json:"search_decrypt,omitempty"`
	// TenantKey is the tenant's own key (32 random bytes, base64): the
	// namespace key is then wrapped by it instead of the operator's key.
	// Another key later rotates it (the namespace key is wrapped again;
	// nothing stored is rewritten).
	TenantKey *string `json:"tenant_key,omitempty"`
	// RevokeTenantKey deletes the tenant key and the keys it wraps: what
	// was sealed under it can never be read again.
	RevokeTenantKey bool `json:"revoke_tenant_key,omitempty"`
}

// Key sources of Encryption.KeySource.
const (
	KeySourceNone     = "none"     // no keys yet: nothing was ever sealed
	KeySourceOperator = "operator" // the namespace key is wrapped by the operator's master key
	KeySourceTenant   = "tenant"   // the namespace key is wrapped by the tenant's key
	KeySourceRevoked  = "revoked"  // the tenant key was revoked: a new one is needed to seal again
)

// Encryption is GET and PUT /api/v1/encryption: the namespace's
// encryption settings, never a key.
type Encryption struct {
	Enabled       bool   `json:"enabled"`
	SearchDecrypt bool   `json:"search_decrypt"`
	KeySource     string `json:"key_source"`
	// TenantKeyID names the tenant key in use (a digest of it, safe to
	// show); null when none.
	TenantKeyID *string `json:"tenant_key_id"`
	// Generation counts the namespace's data keys: a revoke ends one, the
	// next key supplied starts the next.
	Generation  int                    `json:"generation"`
	RevokedKeys []EncryptionRevokedKey `json:"revoked_keys"`
	UpdatedAt   *time.Time             `json:"updated_at"`
}

// EncryptionRevokedKey is a tenant key revoked, and the generation of
// data it made unreadable.
type EncryptionRevokedKey struct {
	KeyID      string    `json:"key_id"`
	Generation int       `json:"generation"`
	RevokedAt  time.Time `json:"revoked_at"`
}
