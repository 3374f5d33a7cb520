package layout

// A tenant's console sign-in through its identity provider. The prefix
// continues idempotency.go's list.
const prefixSSO byte = 0x2c // tenant id → its OIDC sign-in configuration (JSON)

// SSO is the key of tenant tid's OIDC sign-in configuration.
func SSO(tid string) []byte { return key(prefixSSO, tid) }

// AllSSO prefixes every tenant's configuration.
func AllSSO() []byte { return []byte{prefixSSO} }
