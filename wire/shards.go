package wire

import (
	"encoding/json"
	"time"
)

// Self-hosted shard clusters: a tenant's owner mints a join token, the
// customer's shard nodes trade it for their own certificates at control's
// join endpoint, and the tenant places namespaces on the shard.

// Limits of join tokens.
const (
	MinJoinTokenTTL     = time.Minute
	MaxJoinTokenTTL     = 24 * time.Hour
	DefaultJoinTokenTTL = time.Hour
	// MaxJoinTokenNodes is the largest cluster one token joins (Raft
	// groups of 1, 3 or 5 nodes).
	MaxJoinTokenNodes = 5
)

// CreateJoinTokenRequest is POST /api/v1/shards/join-tokens. ExpiresIn is
// a duration ("30m", or a number of seconds) from MinJoinTokenTTL to
// MaxJoinTokenTTL, default DefaultJoinTokenTTL. Nodes is how many nodes
// the token joins (1 to MaxJoinTokenNodes, default 1): one token per
// cluster, each node joining once under its own node id.
type CreateJoinTokenRequest struct {
	Name      string          `json:"name"`
	ExpiresIn json.RawMessage `json:"expires_in,omitempty"`
	Nodes     int             `json:"nodes,omitempty"`
}

// JoinToken answers a minted token, shown this once, and the new shard's
// id.
type JoinToken struct {
	Token     string    `json:"token"`
	ShardID   string    `json:"shard_id"`
	Name      string    `json:"name"`
	Nodes     int       `json:"nodes"`
	ExpiresAt time.Time `json:"expires_at"`
}

// OwnedShard is a tenant's self-hosted shard as GET /api/v1/shards lists
// it: the nodes that joined it so far of the ExpectedNodes its join token
// was minted for, when that token expires (only while it has nodes left
// to join), and the names of the tenant's namespaces placed on it.
type OwnedShard struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Nodes []string `json:"nodes"`
	// Retired are the ids of nodes removed from it: none ever joins again.
	Retired        []string   `json:"retired,omitempty"`
	ExpectedNodes  int        `json:"expected_nodes"`
	TokenExpiresAt *time.Time `json:"token_expires_at,omitempty"`
	Namespaces     []string   `json:"namespaces"`
	CreatedAt      time.Time  `json:"created_at"`
	// Connected lists the nodes whose tunnels the answering gateway
	// holds now (through a gateway; another gateway may hold the others').
	Connected []string `json:"connected,omitempty"`
	// Health is the shard's GET /api/v1/cluster as one of the Connected
	// nodes answered it; absent when none is connected here or none
	// answered in time.
	Health *ClusterHealth `json:"health,omitempty"`
}

// OwnedShardList is GET /api/v1/shards.
type OwnedShardList struct {
	Shards []OwnedShard `json:"shards"`
}

// JoinRequest is POST {control}/control/v1/join: a shard node trades a
// join token and a certificate request (PEM) for its certificate.
type JoinRequest struct {
	Token  string `json:"token"`
	NodeID string `json:"node_id"`
	CSR    string `json:"csr"`
}

// JoinResponse is the joined node's certificate (PEM), the CA that signs
// self-hosted shards' certificates (its peers' and the gateways' tunnel
// listeners' trust), who it is, and where to dial the tunnel.
type JoinResponse struct {
	Certificate string   `json:"certificate"`
	CA          string   `json:"ca"`
	ShardID     string   `json:"shard_id"`
	NodeID      string   `json:"node_id"`
	TenantID    string   `json:"tenant_id"`
	TunnelURLs  []string `json:"tunnel_urls"`
}

// SelfHostedShard is one self-hosted shard as gateways know it: its
// owner and joined nodes, which the tunnel listener admits.
type SelfHostedShard struct {
	ID       string   `json:"id"`
	TenantID string   `json:"tenant_id"`
	Nodes    []string `json:"nodes"`
}

// SelfHostedShards is GET {control}/internal/v1/shards/self-hosted: every
// tenant's self-hosted shards, for gateways only.
type SelfHostedShards struct {
	Shards []SelfHostedShard `json:"shards"`
}

// TrustBundle is what a self-hosted shard's nodes need to judge their
// tenant's API keys themselves, so the shard's local API serves the
// tenant's workers while the hosted service is unreachable: control
// builds it for gateways (GET {control}/internal/v1/tenants/{tid}/shards/{sid}/trust),
// and each gateway pushes it to the shard's nodes connected to it, over
// their tunnels (POST {node}/internal/v1/trust), every
// TrustPushInterval. It holds only what is the tenant's own, or public:
//   - JWKS: the public halves of the keys that sign API keys (what
//     GET {control}/control/v1/jwks publishes);
//   - Revocations: the tenant's revoked keys and rotated keys' secrets,
//     and the signing keys retiring; Version is a digest of that content
//     (it changes when the content does; it says nothing of other
//     tenants' revocations), Roles only the tenant's version;
//   - Roles: the tenant's custom roles;
//   - Namespaces: the tenant's namespaces placed on the shard (without
//     addresses).
type TrustBundle struct {
	TenantID    string               `json:"tenant_id"`
	ShardID     string               `json:"shard_id"`
	IssuedAt    time.Time            `json:"issued_at"` // control's clock when it built the bundle
	JWKS        json.RawMessage      `json:"jwks"`
	Revocations Revocations          `json:"revocations"`
	Roles       TenantRoles          `json:"roles"`
	Namespaces  []NamespacePlacement `json:"namespaces"`
}

// MaxTrustBundleBytes bounds a trust bundle's JSON, as a node takes it.
const MaxTrustBundleBytes = 8 << 20

// RenewRequest is POST {control}/control/v1/join/renew: a joined
// self-hosted node trades its current certificate (PEM), still valid, and
// a certificate request (PEM) signed by that certificate's key for a new
// certificate of the same identity. It needs no client certificate: the
// certificate and the request's signature are its credential.
type RenewRequest struct {
	Certificate string `json:"certificate"`
	CSR         string `json:"csr"`
}

// RenewResponse is the renewed certificate (PEM), when it expires, and
// the self-hosted CA that signed it.
type RenewResponse struct {
	Certificate string    `json:"certificate"`
	CA          string    `json:"ca"`
	NotAfter    time.Time `json:"not_after"`
}

// MaxRenewPEMBytes bounds each of a RenewRequest's two PEM fields.
const MaxRenewPEMBytes = 16 << 10

// AddNodesRequest is POST /api/v1/shards/{id}/join-tokens: a token that
// joins Nodes more nodes (1 to MaxJoinTokenNodes, default 1) to an
// existing self-hosted shard, under node ids it never had (to replace a
// node removed with DELETE /api/v1/shards/{id}/nodes/{node}, or to grow
// the cluster). ExpiresIn as in CreateJoinTokenRequest. The answer is a
// JoinToken.
type AddNodesRequest struct {
	Nodes     int             `json:"nodes,omitempty"`
	ExpiresIn json.RawMessage `json:"expires_in,omitempty"`
}
