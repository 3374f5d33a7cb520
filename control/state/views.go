package state

import "github.com/jobbie/jobbie/wire"

func RoleView(r CustomRole) wire.Role {
	perms := make([]wire.Permission, len(r.Permissions))
	for i, p := range r.Permissions {
		perms[i] = wire.Permission(p)
	}
	created, updated := r.CreatedAt, r.UpdatedAt
	return wire.Role{Name: r.Name, Description: r.Description, Permissions: perms, CreatedAt: &created, UpdatedAt: &updated}
}

func TenantView(t Tenant) wire.Tenant {
	return wire.Tenant{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt}
}

func CreatedTenantView(r CreateTenantResult) wire.CreatedTenant {
	return wire.CreatedTenant{Tenant: TenantView(r.Tenant), Namespace: r.Namespace, OwnerKey: r.OwnerKey}
}

func KeyView(k APIKey) wire.Key {
	return wire.Key{
		ID: k.ID, Name: k.Name, Description: k.Description, Role: string(k.Role), Namespaces: k.Namespaces,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
		LastUsedAt: k.LastUsedAt, RotatedAt: k.RotatedAt,
	}
}

func RotatedKeyView(r KeyRotated, token string) wire.RotatedKey {
	return wire.RotatedKey{Key: KeyView(r.Key), Token: token, PreviousKeyValidUntil: r.PreviousValidUntil}
}

// NamespaceView is a namespace with its shard, without where to reach it.
func NamespaceView(ns Namespace) wire.NamespacePlacement { return PlacementView(ns, "", nil, false) }

func CreatedKeyView(k CreatedKey) wire.CreatedKey {
	return wire.CreatedKey{Key: KeyView(k.APIKey), Token: k.Key}
}

// PlacementView is namespace ns with where to reach its shard and
// whether a move of it is running (see Server.Namespace).
func PlacementView(ns Namespace, addr string, members []string, moving bool) wire.NamespacePlacement {
	v := wire.NamespacePlacement{
		Namespace: wire.Namespace{Name: ns.Name, Description: ns.Description, DeletionProtection: ns.DeletionProtection,
			CreatedAt: ns.CreatedAt},
		ShardID: ns.ShardID, ShardAddr: addr, ShardMembers: members, Moving: moving,
	}
	if ns.Retention > 0 {
		v.Retention = wire.FormatDuration(ns.Retention)
	}
	return v
}

// Each is view of every record: never nil, so an empty list is [] in JSON.
func Each[T, V any](records []T, view func(T) V) []V {
	out := make([]V, 0, len(records))
	for _, r := range records {
		out = append(out, view(r))
	}
	return out
}
