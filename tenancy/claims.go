package tenancy

import (
	"fmt"
	"slices"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is the "iss" of every key the control plane signs.
const Issuer = "jobbie"

// AllNamespaces in a key's namespace list means every namespace of the tenant.
const AllNamespaces = "*"

// KeyClaims are the claims of an API key (a JWT signed with EdDSA; the
// header's kid names the signing key). The subject is the key id.
type KeyClaims struct {
	TenantID         string   `json:"tid,omitempty"`
	Role             Role     `json:"role"`
	Namespaces       []string `json:"ns,omitempty"`
	DefaultNamespace string   `json:"dns,omitempty"`
	jwt.RegisteredClaims
}

// KeyID is the key's id (its subject).
func (c *KeyClaims) KeyID() string { return c.Subject }

// AllowsNamespace reports whether the key may use namespace ns.
func (c *KeyClaims) AllowsNamespace(ns string) bool {
	return slices.Contains(c.Namespaces, AllNamespaces) || slices.Contains(c.Namespaces, ns)
}

// Check validates the claims' shape after the signature was verified.
func (c *KeyClaims) Check() error {
	if c.Issuer != Issuer {
		return fmt.Errorf("key issuer %q is not %q", c.Issuer, Issuer)
	}
	if c.Subject == "" {
		return fmt.Errorf("key has no id")
	}
	if c.Role == RoleOperator {
		return nil
	}
	if _, err := ParseRole(string(c.Role)); err != nil {
		return err
	}
	if err := ValidateTenantID(c.TenantID); err != nil {
		return err
	}
	if len(c.Namespaces) == 0 || c.DefaultNamespace == "" {
		return fmt.Errorf("key names no namespace")
	}
	return nil
}
