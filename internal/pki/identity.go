// Package pki is the deployment's internal certificate authority and the
// identities it vouches for. Every process of a deployment holds a
// certificate naming its role, shard and node (Identity); every internal
// channel is mutual TLS between such certificates, and each side checks
// the other's identity, not its address: gossip says where a leader is,
// the certificate says whom a connection reached.
package pki

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jobbie/jobbie/tenancy"
)

// Role is what a process is to the others.
type Role string

// The roles. An operator identity is a person or tool (the `jobbie shard`
// member commands, `jobbie bench --direct`) acting on the internal APIs; a
// metrics identity is a scraper, which may read /metrics and nothing else.
const (
	RoleControl  Role = "control"
	RoleGateway  Role = "gateway"
	RoleShard    Role = "shard"
	RoleOperator Role = "operator"
	RoleMetrics  Role = "metrics"
)

func (r Role) valid() bool {
	switch r {
	case RoleControl, RoleGateway, RoleShard, RoleOperator, RoleMetrics:
		return true
	}
	return false
}

// Scrapers are who may read an internal listener's /metrics.
var Scrapers = Roles(RoleMetrics, RoleOperator)

// Identity is who a certificate speaks for: a role, the shard cluster for
// a shard node, and the node's (or operator's) name; for a node of a
// self-hosted shard cluster, also the tenant that owns it, so whoever
// admits the node can check that it serves that tenant only.
type Identity struct {
	Role   Role
	Shard  string // shard id; set for RoleShard only
	Node   string
	Tenant string // owning tenant's id; RoleShard only, empty for hosted shards
}

// uriScheme names identities in certificates: jobbie://<role>/<shard>/<node>,
// with "-" for the shard of roles that belong to none, and
// ?tenant=<id> for a tenant-owned shard node. Certificates without the
// query (every hosted process) read exactly as before it existed.
const uriScheme = "jobbie"

// tenantParam is the URI query parameter naming a shard's owner.
const tenantParam = "tenant"

var namePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Validate reports a malformed identity.
func (id Identity) Validate() error {
	if !id.Role.valid() {
		return fmt.Errorf("pki: unknown role %q (control, gateway, shard, operator or metrics)", id.Role)
	}
	if !namePart.MatchString(id.Node) {
		return fmt.Errorf("pki: node name %q must be 1-63 letters, digits, '.', '_' or '-'", id.Node)
	}
	if id.Role == RoleShard && !namePart.MatchString(id.Shard) {
		return fmt.Errorf("pki: shard id %q must be 1-63 letters, digits, '.', '_' or '-'", id.Shard)
	}
	if id.Role != RoleShard && id.Shard != "" {
		return fmt.Errorf("pki: a %s identity names no shard", id.Role)
	}
	if id.Tenant != "" {
		if id.Role != RoleShard {
			return fmt.Errorf("pki: a %s identity names no tenant: only a self-hosted shard node belongs to one", id.Role)
		}
		if err := tenancy.ValidateTenantID(id.Tenant); err != nil {
			return fmt.Errorf("pki: %w", err)
		}
	}
	return nil
}

// Hosted is the identity without its owning tenant: role, shard and node,
// which alone name a process (shard ids are unique across tenants). Use
// it to key a node whatever tenant its certificate names.
func (id Identity) Hosted() Identity {
	id.Tenant = ""
	return id
}

// URI is the identity as written in a certificate's URI SAN.
func (id Identity) URI() *url.URL {
	shard := id.Shard
	if shard == "" {
		shard = "-"
	}
	u := &url.URL{Scheme: uriScheme, Host: string(id.Role), Path: "/" + shard + "/" + id.Node}
	if id.Tenant != "" {
		u.RawQuery = url.Values{tenantParam: {id.Tenant}}.Encode()
	}
	return u
}

func (id Identity) String() string { return id.URI().String() }

// ParseIdentity reads jobbie://<role>/<shard>/<node>[?tenant=<id>].
func ParseIdentity(s string) (Identity, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != uriScheme {
		return Identity{}, fmt.Errorf("pki: %q is not a jobbie:// identity", s)
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 2 || u.User != nil || u.Fragment != "" {
		return Identity{}, fmt.Errorf("pki: identity %q is not jobbie://<role>/<shard>/<node>[?tenant=<id>]", s)
	}
	tenant, err := tenantOf(u.RawQuery)
	if err != nil {
		return Identity{}, fmt.Errorf("pki: identity %q: %w", s, err)
	}
	id := Identity{Role: Role(u.Host), Shard: parts[0], Node: parts[1], Tenant: tenant}
	if id.Shard == "-" {
		id.Shard = ""
	}
	if err := id.Validate(); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// tenantOf reads the query of an identity URI: nothing, or exactly one
// tenant parameter. Anything else is refused rather than ignored, so a
// certificate never carries a claim nobody reads.
func tenantOf(rawQuery string) (string, error) {
	if rawQuery == "" {
		return "", nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", fmt.Errorf("malformed query: %w", err)
	}
	vs, ok := q[tenantParam]
	if len(q) != 1 || !ok || len(vs) != 1 || vs[0] == "" {
		return "", errors.New("the only query an identity may carry is one tenant=<id>")
	}
	return vs[0], nil
}

// ErrNoIdentity is IdentityOf's error for a certificate that names none.
var ErrNoIdentity = errors.New("pki: the certificate names no jobbie:// identity")

// IdentityOf reads the identity a certificate speaks for: its one
// jobbie:// URI SAN.
func IdentityOf(c *x509.Certificate) (Identity, error) {
	var found *Identity
	for _, u := range c.URIs {
		if u.Scheme != uriScheme {
			continue
		}
		id, err := ParseIdentity(u.String())
		if err != nil {
			return Identity{}, err
		}
		if found != nil {
			return Identity{}, errors.New("pki: the certificate names more than one identity")
		}
		found = &id
	}
	if found == nil {
		return Identity{}, ErrNoIdentity
	}
	return *found, nil
}

// Policy decides whether a verified peer may be talked to.
type Policy func(Identity) error

// Roles admits peers of the given roles.
func Roles(roles ...Role) Policy {
	return func(id Identity) error {
		for _, r := range roles {
			if id.Role == r {
				return nil
			}
		}
		return fmt.Errorf("pki: %s may not do this (allowed: %v)", id, roles)
	}
}

// ShardMember admits the nodes of one shard cluster.
func ShardMember(shard string) Policy {
	return func(id Identity) error {
		if id.Role != RoleShard || id.Shard != shard {
			return fmt.Errorf("pki: %s is not a member of shard %s", id, shard)
		}
		return nil
	}
}

// OwnedShardMember admits the nodes of one shard cluster whose
// certificates name tenant as the owner; with tenant "" (a hosted
// shard) they must name none. Where a shard's owner is known, it checks
// more than ShardMember: a node re-issued for another tenant is refused.
func OwnedShardMember(shard, tenant string) Policy {
	return func(id Identity) error {
		if id.Role != RoleShard || id.Shard != shard {
			return fmt.Errorf("pki: %s is not a member of shard %s", id, shard)
		}
		if id.Tenant != tenant {
			if tenant == "" {
				return fmt.Errorf("pki: %s belongs to tenant %s, but shard %s is hosted", id, id.Tenant, shard)
			}
			return fmt.Errorf("pki: %s does not belong to tenant %s", id, tenant)
		}
		return nil
	}
}

// Either admits a peer that one of the policies admits.
func Either(ps ...Policy) Policy {
	return func(id Identity) error {
		var errs []error
		for _, p := range ps {
			err := p(id)
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
}
