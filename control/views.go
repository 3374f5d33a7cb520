package control

import "github.com/jobbie/jobbie/wire"

// HTTP answers are wire values, built here from control's own records so
// that what is stored and what is sent may change apart. Registered
// shards are answered as their stored records; namespaces as
// wire.NamespacePlacement, so the operator and gateways see their
// shard_id, which the tenant's wire.Namespace leaves out.

func tenantView(t Tenant) wire.Tenant {
	return wire.Tenant{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt}
}

func createdTenantView(r CreateTenantResult) wire.CreatedTenant {
	return wire.CreatedTenant{Tenant: tenantView(r.Tenant), Namespace: r.Namespace, OwnerKey: r.OwnerKey}
}

func keyView(k APIKey) wire.Key {
	return wire.Key{
		ID: k.ID, Name: k.Name, Description: k.Description, Role: string(k.Role), Namespaces: k.Namespaces,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
		LastUsedAt: k.LastUsedAt, RotatedAt: k.RotatedAt,
	}
}

func rotatedKeyView(r keyRotated, token string) wire.RotatedKey {
	return wire.RotatedKey{Key: keyView(r.Key), Token: token, PreviousKeyValidUntil: r.PreviousValidUntil}
}

// namespaceView is a namespace with its shard, without where to reach it.
func namespaceView(ns Namespace) wire.NamespacePlacement { return placementView(ns, "", nil, false) }

func createdKeyView(k CreatedKey) wire.CreatedKey {
	return wire.CreatedKey{Key: keyView(k.APIKey), Token: k.Key}
}

// placementView is namespace ns with where to reach its shard and
// whether a move of it is running (see Server.Namespace).
func placementView(ns Namespace, addr string, members []string, moving bool) wire.NamespacePlacement {
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

// each is view of every record: never nil, so an empty list is [] in JSON.
func each[T, V any](records []T, view func(T) V) []V {
	out := make([]V, 0, len(records))
	for _, r := range records {
		out = append(out, view(r))
	}
	return out
}
