package tenancy

// Keys of custom roles. A key's role claim is a built-in role or the name
// of one of its tenant's custom roles (ValidateRoleName); which
// permissions a custom role holds is the tenant's current definition of
// it, which gateways look up, never something the key carries.

// IsCustomRole reports whether r names a custom role: a valid custom role
// name, which no built-in role has.
func IsCustomRole(r Role) bool { return ValidateRoleName(string(r)) == nil }

// CheckAnyRole is Check for a key whose role may also be a custom role's
// name. Whether the tenant has that role is for the caller to find out.
func (c *KeyClaims) CheckAnyRole() error {
	if !IsCustomRole(c.Role) {
		return c.Check()
	}
	shape := *c
	shape.Role = RoleViewer // every other claim is checked as for any tenant key
	return shape.Check()
}
