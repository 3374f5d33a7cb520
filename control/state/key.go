package state

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// maxActiveKeysPerTenant bounds a tenant's active (unrevoked, unexpired) API keys.
const maxActiveKeysPerTenant = 1000

// CreateKeyCmd stores a new key's metadata. TenantID is empty for an
// operator key. The proposer has checked the shapes of every field; the
// handler checks what depends on state or on the command's time (the
// tenant and namespaces exist, the expiry is ahead).
type CreateKeyCmd struct {
	ID         string       `json:"id"`
	TenantID   string       `json:"tenant_id,omitempty"`
	Name       string       `json:"name"`
	Role       tenancy.Role `json:"role"`
	Namespaces []string     `json:"namespaces,omitempty"`
	ExpiresAt  *time.Time   `json:"expires_at,omitempty"` // whole seconds, UTC
	// Description was checked by the proposer.
	Description string `json:"description,omitempty"`
}

// RevokeKeyCmd revokes a key of a tenant (or an operator key, TenantID "").
// Revoking a revoked key changes nothing.
type RevokeKeyCmd struct {
	TenantID string `json:"tenant_id,omitempty"`
	ID       string `json:"id"`
}

func applyCreateKey(tx *replica.Tx, c *CreateKeyCmd) (APIKey, error) {
	if err := CheckKeyExpiry(c.ExpiresAt, tx.Now); err != nil {
		return APIKey{}, err
	}
	if c.TenantID != "" {
		if err := CheckKeyScope(tx, *c, tx.Now); err != nil {
			return APIKey{}, err
		}
	}
	if must(Exists(tx, layout.Key(c.TenantID, c.ID))) {
		return APIKey{}, apierr.New(apierr.Conflict, "key id %q exists", c.ID)
	}
	k := APIKey{ID: c.ID, TenantID: c.TenantID, Name: c.Name, Role: c.Role, Namespaces: c.Namespaces,
		CreatedAt: tx.Now, ExpiresAt: c.ExpiresAt, Description: c.Description}
	putKey(tx, k)
	return k, nil
}

// CheckKeyScope checks that a tenant key's tenant, namespaces and custom
// role (when it has one) exist and that the tenant has room for another
// key: revoked and expired keys do not count.
func CheckKeyScope(r pebble.Reader, c CreateKeyCmd, now time.Time) error {
	if _, err := LoadTenant(r, c.TenantID); err != nil {
		return businessErr(err)
	}
	if tenancy.IsCustomRole(c.Role) && !must(Exists(r, layout.Role(c.TenantID, string(c.Role)))) {
		return apierr.Field("role", "role %q does not exist", c.Role)
	}
	for _, ns := range c.Namespaces {
		if ns == tenancy.AllNamespaces {
			continue
		}
		if !must(Exists(r, layout.Namespace(c.TenantID, ns))) {
			return apierr.Field("namespaces", "namespace %q does not exist", ns)
		}
	}
	active := 0
	err := scanJSON(r, layout.Keys(c.TenantID), func(_ []byte, k APIKey) {
		if k.Active(now) {
			active++
		}
	})
	if err != nil {
		panic(err)
	}
	if active >= maxActiveKeysPerTenant {
		return apierr.New(apierr.Conflict, "a tenant may have at most %d active keys; revoke some first", maxActiveKeysPerTenant)
	}
	return CheckCountQuota(r, c.TenantID, now, "max_keys", active)
}

func applyRevokeKey(tx *replica.Tx, c *RevokeKeyCmd) (APIKey, error) {
	k, err := LoadKey(tx, c.TenantID, c.ID)
	if err != nil {
		return APIKey{}, businessErr(err)
	}
	if k.RevokedAt != nil {
		return k, nil
	}
	now := tx.Now
	k.RevokedAt = &now
	k.Grace = nil
	putKey(tx, k)
	mustSet(tx, layout.Revoked(k.ID), layout.Uint64(uint64(now.UnixNano())))
	mustDelete(tx, layout.Rotated(k.ID)) // revoked outright: no secret of it works
	version := must(getUint64(tx, layout.RevocationVersion()))
	mustSet(tx, layout.RevocationVersion(), layout.Uint64(version+1))
	return k, nil
}

func putKey(tx *replica.Tx, k APIKey) {
	mustSetJSON(tx, layout.Key(k.TenantID, k.ID), k)
}

func LoadKey(r pebble.Reader, tid, id string) (APIKey, error) {
	var k APIKey
	ok, err := getJSON(r, layout.Key(tid, id), &k)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "key %q not found", id)
	}
	k.TenantID = tid
	return k, err
}

func ListKeys(r pebble.Reader, tid string) ([]APIKey, error) {
	out := []APIKey{}
	err := scanJSON(r, layout.Keys(tid), func(_ []byte, k APIKey) {
		k.TenantID = tid
		out = append(out, k)
	})
	for i := range out {
		if err == nil {
			out[i], err = WithLastUse(r, out[i])
		}
	}
	return out, err
}

// WithLastUse fills in when key k was last seen in use, for reading.
func WithLastUse(r pebble.Reader, k APIKey) (APIKey, error) {
	b, ok, err := getRaw(r, layout.KeyUsed(k.TenantID, k.ID))
	if ok && err == nil {
		t := time.Unix(0, int64(layout.DecodeUint64(b))).UTC()
		k.LastUsedAt = &t
	}
	return k, err
}

func LoadRevocations(r pebble.Reader) (Revocations, error) {
	version, err := getUint64(r, layout.RevocationVersion())
	if err != nil {
		return Revocations{}, err
	}
	out := Revocations{Version: version, Revoked: []string{}}
	err = scan(r, layout.RevokedKeys(), func(k, _ []byte) error {
		out.Revoked = append(out.Revoked, layout.RevokedID(k))
		return nil
	})
	if err != nil {
		return Revocations{}, err
	}
	err = scanJSON(r, layout.RotatedKeys(), func(_ []byte, ks wire.KeySecrets) { out.Rotated = append(out.Rotated, ks) })
	if err != nil {
		return Revocations{}, err
	}
	if out.SigningKeys, err = RetiringSigningKeys(r); err != nil {
		return Revocations{}, err
	}
	out.Roles, err = LoadRolesVersions(r)
	return out, err
}

// maxKeyLifetimeYears bounds how far ahead a key's expiry may be.
const maxKeyLifetimeYears = 10

// CheckKeyExpiry checks an optional expiry against now: in the future and
// at most maxKeyLifetimeYears ahead.
func CheckKeyExpiry(exp *time.Time, now time.Time) error {
	switch {
	case exp == nil:
		return nil
	case !exp.After(now):
		return apierr.Field("expires_at", "expires_at %s is not in the future", exp.Format(time.RFC3339))
	case exp.After(now.AddDate(maxKeyLifetimeYears, 0, 0)):
		return apierr.Field("expires_at", "expires_at %s is more than %d years ahead", exp.Format(time.RFC3339), maxKeyLifetimeYears)
	}
	return nil
}
