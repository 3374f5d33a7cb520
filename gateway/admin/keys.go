package admin

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// ListKeys shows the keys whose namespaces the caller covers: a key
// limited to some namespaces does not see keys beyond them.
func (a *Admin) ListKeys(c *fiber.Ctx, r *admitted.Request) error {
	list, err := a.control.ListKeys(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
	}
	out := wire.KeyList{Keys: make([]wire.Key, 0, len(list.Keys))}
	for _, k := range list.Keys {
		if covers(r.Key, k.Namespaces) {
			out.Keys = append(out.Keys, k)
		}
	}
	return c.JSON(out)
}

// CreateKey mints a key no more powerful than the caller: a role it may
// grant (a built-in role, or one of the tenant's custom roles), over
// namespaces it has, granting nothing it does not hold (admission's
// grant.go).
// Omitted namespaces (nil) mean the caller's default namespace.
// ExpiresAt goes to control as sent: control parses and checks it,
// against its own clock.
func (a *Admin) CreateKey(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.CreateKeyRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := tenancy.ValidateKeyName(in.Name); err != nil {
		return apierr.Field("name", "%v", err)
	}
	role, err := keyRole(in.Role)
	if err != nil {
		return err
	}
	if err := admission.MayGrantRank(r, role, "mint"); err != nil {
		return err
	}
	if in.Namespaces, err = grantableNamespaces(r.Key, in.Namespaces); err != nil {
		return err
	}
	grant, found, err := a.gate.GrantOf(r, role)
	if err != nil {
		return err
	}
	if !found {
		return apierr.Field("role", "role %q does not exist: it is neither a built-in role nor one of the tenant's custom roles", role)
	}
	if err := admission.MayGrantKey(r, role, grant, in.Namespaces, "mint"); err != nil {
		return err
	}
	if err := grantableExpiry(r.Key, in.ExpiresAt); err != nil {
		return err
	}
	in.Role = string(role)
	ctx, idem := a.keyed(r)
	made, err := a.control.CreateKey(ctx, r.RequestID, r.Key.TenantID, in)
	if err != nil {
		return a.tell(r, err)
	}
	return created(c, idem, fiber.StatusCreated, made)
}

// keyRole reads a new key's role: a built-in role or a custom role's name.
func keyRole(s string) (tenancy.Role, error) {
	if role, err := tenancy.ParseRole(s); err == nil {
		return role, nil
	}
	if tenancy.IsCustomRole(tenancy.Role(s)) {
		return tenancy.Role(s), nil
	}
	return "", apierr.Field("role", "role %q is neither a built-in role (owner, admin, developer, producer, worker, viewer, billing) nor a custom role's name", s)
}

// grantableExpiry keeps a short-lived key from outliving itself through the
// keys it mints: when the caller expires, the new key must expire no later.
func grantableExpiry(caller *tenancy.KeyClaims, raw json.RawMessage) error {
	if caller.ExpiresAt == nil {
		return nil
	}
	var s *string
	if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != nil {
		t, err := time.Parse(time.RFC3339Nano, *s)
		if err != nil {
			return nil // malformed: control answers 400 naming expires_at
		}
		return expiresWithin(caller, &t, "keys it creates must set expires_at no later")
	}
	return expiresWithin(caller, nil, "keys it creates must set expires_at no later")
}

// expiresWithin refuses a key expiring at exp (nil: never) that would
// outlive caller; what says what the caller must do.
func expiresWithin(caller *tenancy.KeyClaims, exp *time.Time, what string) error {
	if caller.ExpiresAt == nil {
		return nil
	}
	limit := caller.ExpiresAt.Time
	if exp != nil && !exp.After(limit) {
		return nil
	}
	return apierr.New(apierr.Forbidden, "this key expires at %s; %s", limit.UTC().Format(time.RFC3339), what)
}

// grantableNamespaces checks and normalizes a new key's namespaces.
func grantableNamespaces(caller *tenancy.KeyClaims, want []string) ([]string, error) {
	if want == nil {
		return []string{caller.DefaultNamespace}, nil
	}
	if len(want) == 0 {
		return nil, apierr.Field("namespaces", "a key needs at least one namespace")
	}
	seen := make(map[string]bool, len(want))
	out := make([]string, 0, len(want))
	for _, ns := range want {
		if ns != tenancy.AllNamespaces {
			if err := tenancy.ValidateNamespace(ns); err != nil {
				return nil, apierr.Field("namespaces", "%v", err)
			}
		}
		if !covers(caller, []string{ns}) {
			return nil, apierr.New(apierr.Forbidden, "API key %s may not grant namespace %q: a key may only grant namespaces it has", caller.Subject, ns)
		}
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out, nil
}

// visibleKey is key id of the caller's tenant when its namespaces are
// within the caller's; any other is "not found", as in the list.
func (a *Admin) visibleKey(r *admitted.Request, id string) (wire.Key, error) {
	k, err := a.control.Key(a.ctx, r.RequestID, r.Key.TenantID, id)
	err = a.tell(r, err)
	if apierr.CodeOf(err) == apierr.NotFound || (err == nil && !covers(r.Key, k.Namespaces)) {
		return wire.Key{}, apierr.New(apierr.NotFound, "API key %q not found", id)
	}
	return k, err
}

// GetKey shows one key (never its secret) the caller could see in the
// list.
func (a *Admin) GetKey(c *fiber.Ctx, r *admitted.Request) error {
	k, err := a.visibleKey(r, c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(k)
}

// DeleteKey revokes a key the caller could have minted (admission's
// grant.go). Keys beyond the caller's namespaces are "not found", as in
// the list.
func (a *Admin) DeleteKey(c *fiber.Ctx, r *admitted.Request) error {
	id := c.Params("id")
	target, err := a.visibleKey(r, id)
	if err != nil {
		return err
	}
	if err := a.gate.MayManageKey(r, tenancy.Role(target.Role), target.Namespaces, "revoke"); err != nil {
		return err
	}
	if err := a.control.DeleteKey(a.ctx, r.RequestID, r.Key.TenantID, id); err != nil {
		return a.tell(r, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// RotateKey gives a key the caller could have minted a new secret: the
// rules of creating one hold for the key as it is (a role the caller may
// grant, namespaces it has, an expiry no later than its own).
func (a *Admin) RotateKey(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.RotateKeyRequest
	if err := apierr.DecodeJSON(c.Request().Body(), &in, true); err != nil {
		return err
	}
	id := c.Params("id")
	target, err := a.visibleKey(r, id)
	if err != nil {
		return err
	}
	if err := a.gate.MayManageKey(r, tenancy.Role(target.Role), target.Namespaces, "rotate"); err != nil {
		return err
	}
	if err := expiresWithin(r.Key, target.ExpiresAt, "it may rotate only keys that expire no later"); err != nil {
		return err
	}
	rotated, err := a.control.RotateKey(a.ctx, r.RequestID, r.Key.TenantID, id, in)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(rotated)
}

// covers reports whether caller has every namespace in nss.
func covers(caller *tenancy.KeyClaims, nss []string) bool {
	if caller.AllowsNamespace(tenancy.AllNamespaces) {
		return true
	}
	for _, ns := range nss {
		if ns == tenancy.AllNamespaces || !caller.AllowsNamespace(ns) {
			return false
		}
	}
	return true
}
