package state

import (
	"encoding/json"
	"hash/fnv"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// JWKSAt is the JWKS (Server.JWKS) as r holds it at now, as JSON.
func JWKSAt(r pebble.Reader, now time.Time) (json.RawMessage, error) {
	keys, err := ListSigningKeys(r)
	if err != nil {
		return nil, err
	}
	return json.Marshal(JWKSOf(keys, now))
}

// JWKSOf is the public halves of the keys usable at now.
func JWKSOf(keys []SigningKey, now time.Time) tenancy.JWKS {
	set := tenancy.JWKS{Keys: make([]tenancy.JWK, 0, len(keys))}
	for _, k := range keys {
		if k.Usable(now) {
			set.Keys = append(set.Keys, tenancy.NewJWK(k.ID, k.Public()))
		}
	}
	return set
}

// RetiringSigningKeys are the signing keys a rotation replaced, with
// when they retire.
func RetiringSigningKeys(r pebble.Reader) ([]wire.RetiringSigningKey, error) {
	var out []wire.RetiringSigningKey
	err := scanJSON(r, layout.SigningKeys(), func(_ []byte, k SigningKey) {
		if k.RetiresAt != nil {
			out = append(out, wire.RetiringSigningKey{Kid: k.ID, RetiresAt: *k.RetiresAt})
		}
	})
	return out, err
}

// TenantRevocations is the revocation list cut to tenant tid: its
// revoked keys, its rotated keys' secrets, its roles version, and every
// retiring signing key (public, and the same for all). Its version is a
// digest of that content, not the global list's counter, which moves with
// every tenant's revocations.
func TenantRevocations(r pebble.Reader, tid string) (wire.Revocations, error) {
	out := wire.Revocations{Revoked: []string{}}
	var live []string
	err := scanJSON(r, layout.Keys(tid), func(_ []byte, k APIKey) {
		if k.RevokedAt != nil {
			out.Revoked = append(out.Revoked, k.ID)
		} else {
			live = append(live, k.ID) // a revocation deletes the key's rotated entry
		}
	})
	if err != nil {
		return wire.Revocations{}, err
	}
	for _, id := range live {
		var ks wire.KeySecrets
		ok, err := getJSON(r, layout.Rotated(id), &ks)
		if err != nil {
			return wire.Revocations{}, err
		}
		if ok {
			out.Rotated = append(out.Rotated, ks)
		}
	}
	if out.SigningKeys, err = RetiringSigningKeys(r); err != nil {
		return wire.Revocations{}, err
	}
	v, ok, err := getRaw(r, layout.RolesVersion(tid))
	if err != nil {
		return wire.Revocations{}, err
	}
	if ok {
		out.Roles = []wire.RolesVersion{{TenantID: tid, Version: layout.DecodeUint64(v)}}
	}
	out.Version, err = RevocationsDigest(out)
	return out, err
}

// RevocationsDigest is the FNV-1a digest of rev's content (its Version
// aside), never 0, which a node may read as "none yet".
func RevocationsDigest(rev wire.Revocations) (uint64, error) {
	rev.Version = 0
	b, err := json.Marshal(rev)
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	if d := h.Sum64(); d != 0 {
		return d, nil
	}
	return 1, nil
}

// TenantRoles is tenant tid's custom roles as GET
// /internal/v1/tenants/{tid}/roles answers them.
func TenantRoles(r pebble.Reader, tid string) (wire.TenantRoles, error) {
	version, err := getUint64(r, layout.RolesVersion(tid))
	if err != nil {
		return wire.TenantRoles{}, err
	}
	roles, err := ListRoles(r, tid)
	return wire.TenantRoles{Roles: Each(roles, RoleView), Version: version}, err
}

// NamespacesOn is tenant tid's namespaces on its self-hosted shard sid,
// without addresses (the nodes are the shard).
func NamespacesOn(r pebble.Reader, tid, sid string) ([]wire.NamespacePlacement, error) {
	list, err := ListNamespaces(r, tid)
	if err != nil {
		return nil, err
	}
	out := []wire.NamespacePlacement{}
	for _, ns := range list {
		if ns.ShardID == sid {
			v := NamespaceView(ns)
			v.Shard = sid // the tenant's own shard: named, as in its namespace answers
			out = append(out, v)
		}
	}
	return out, nil
}
