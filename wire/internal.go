package wire

import (
	"fmt"
	"strconv"
	"time"
)

// Shapes of the internal API between Jobbie's own processes
// (docs/internal-api.md): never sent to a tenant.

// NamespacePlacement is a namespace as control holds it: the tenant's
// view and its shard. Asked where one namespace lives, control adds the
// shard's configured address or first registered member, and every
// registered member's HTTP address (tried when gossip names no leader);
// lists and changes leave those out.
type NamespacePlacement struct {
	Namespace
	ShardID      string   `json:"shard_id"`
	ShardAddr    string   `json:"shard_addr,omitempty"`
	ShardMembers []string `json:"shard_members,omitempty"`
	// Moving is set, in the answer about one namespace, while a live move
	// of it has not ended (from its start until completed, cancelled or
	// failed, switched included): control then refuses to delete it (409),
	// so a gateway must not empty it on its shard first.
	Moving bool `json:"moving,omitempty"`
	// Unjoined is set, in the answer about one namespace, when its shard is
	// a self-hosted one no node has joined yet: nothing can be on it, so a
	// gateway deletes the namespace in control alone.
	Unjoined bool `json:"unjoined,omitempty"`
}

// Revocations is every revoked key id, the generations of rotated keys,
// the signing keys a rotation replaced with when they retire, the roles
// version of every tenant that ever changed its custom roles (a gateway
// drops its copy of a tenant's roles older than that), and the list's
// version, which grows by one with each revocation, each rotation (of a
// key or of the signing key) and each change of a custom role.
type Revocations struct {
	Version     uint64               `json:"version"`
	Revoked     []string             `json:"revoked"`
	Rotated     []KeySecrets         `json:"rotated,omitempty"`
	SigningKeys []RetiringSigningKey `json:"retiring_signing_keys,omitempty"`
	Roles       []RolesVersion       `json:"roles,omitempty"`
}

// RetiringSigningKey is a signing key a rotation replaced: from RetiresAt
// on (by the gateway's clock) no API key it signed is honoured, cached or
// not, whatever JWKS the gateway last fetched.
type RetiringSigningKey struct {
	Kid       string    `json:"kid"`
	RetiresAt time.Time `json:"retires_at"`
}

// KeySecrets says which secrets of a rotated key work. A key's token
// carries its generation in the jti claim (absent: generation 0); each
// rotation adds one. A token of the current Generation works; an older
// one only while it is listed in Grace and before its Until (judged by
// the gateway's clock); any other older one is refused. A token newer
// than Generation comes from a rotation the list does not show yet, and
// works.
type KeySecrets struct {
	KeyID      string        `json:"key_id"`
	Generation uint64        `json:"generation"`
	Grace      []GraceSecret `json:"grace,omitempty"`
}

// SecretGeneration reads the generation a key's token carries in its jti
// claim: "" is 0 (a key never rotated), else a decimal number.
func SecretGeneration(jti string) (uint64, error) {
	if jti == "" {
		return 0, nil
	}
	gen, err := strconv.ParseUint(jti, 10, 64)
	if err != nil || gen == 0 || jti[0] == '0' || jti[0] == '+' {
		return 0, fmt.Errorf("key generation (jti) %q is not a positive decimal number", jti)
	}
	return gen, nil
}

// GraceSecret is a replaced secret that keeps working until Until.
type GraceSecret struct {
	Generation uint64    `json:"generation"`
	Until      time.Time `json:"until"`
}

// KeyUsage is what a gateway reports to control (POST
// /internal/v1/keys/used): the keys it admitted since its last report,
// each with the time it saw it.
type KeyUsage struct {
	Keys []KeyUse `json:"keys"`
}

// MaxKeyUses bounds the entries of one KeyUsage report.
const MaxKeyUses = 250

// KeyUse is one key a gateway admitted, and when.
type KeyUse struct {
	TenantID string    `json:"tenant_id"`
	KeyID    string    `json:"key_id"`
	At       time.Time `json:"at"`
}

// ShardRegistration is what a shard cluster tells control about itself
// (POST /control/v1/shards/register). Capacity is the most namespaces it
// should hold (0: control's default).
type ShardRegistration struct {
	ShardID  string        `json:"shard_id"`
	Members  []ShardMember `json:"members"`
	Capacity uint64        `json:"capacity,omitempty"`
	Version  string        `json:"version,omitempty"`
}

// ShardMember is one node of a shard cluster, as it registered.
type ShardMember struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
	RaftAddr string `json:"raft_addr,omitempty"`
}

// TenantQuota is control's GET /internal/v1/tenants/{tid}/quota: what a
// gateway needs to enforce a tenant's plan at once, the limits of the
// plan in effect and, when the plan caps monthly executions, the month's
// executions so far as the ledger has them (behind by the metering lag).
type TenantQuota struct {
	TenantID   string     `json:"tenant_id"`
	Plan       string     `json:"plan"`
	Limits     PlanLimits `json:"limits"`
	Month      time.Time  `json:"month"`      // the start of the UTC month Executions counts
	Executions int64      `json:"executions"` // 0 unless Limits.MonthlyExecutions is set
}

// APIRequestsReport is a gateway's push to control (POST
// /internal/v1/usage/api-requests): the absolute number of requests it
// admitted per tenant and UTC hour since it started, under the instance
// id it drew at start. Sending the same counts again changes nothing; a
// larger count replaces a smaller one.
type APIRequestsReport struct {
	Gateway string             `json:"gateway"`
	Counts  []APIRequestsCount `json:"counts"`
}

// APIRequestsCount is one tenant's requests in one hour.
type APIRequestsCount struct {
	TenantID string    `json:"tenant_id"`
	Hour     time.Time `json:"hour"`
	Count    int64     `json:"count"`
}

// MaxAPIRequestCounts bounds the counts of one APIRequestsReport (the
// body limit holds about this many); a gateway sends more in several.
const MaxAPIRequestCounts = 500
