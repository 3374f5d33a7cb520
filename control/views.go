package control

import "github.com/jobbie/jobbie/wire"

// HTTP answers are wire values, built here from control's own records so
// that what is stored and what is sent may change apart. Namespaces and
// registered shards are answered as their stored records: the operator
// and gateways see a namespace's shard_id, which no wire shape carries.

func tenantView(t Tenant) wire.Tenant {
	return wire.Tenant{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt}
}

func createdTenantView(r CreateTenantResult) wire.CreatedTenant {
	return wire.CreatedTenant{Tenant: tenantView(r.Tenant), Namespace: r.Namespace, OwnerKey: r.OwnerKey}
}

func keyView(k APIKey) wire.Key {
	return wire.Key{
		ID: k.ID, Name: k.Name, Role: string(k.Role), Namespaces: k.Namespaces,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
}

func createdKeyView(k CreatedKey) wire.CreatedKey {
	return wire.CreatedKey{Key: keyView(k.APIKey), Token: k.Key}
}

// placementView is namespace ns with where to reach its shard (see
// Server.Namespace).
func placementView(ns Namespace, addr string, members []string) wire.NamespacePlacement {
	return wire.NamespacePlacement{
		Name: ns.Name, CreatedAt: ns.CreatedAt, ShardID: ns.ShardID, ShardAddr: addr, ShardMembers: members,
	}
}

// each is view of every record: never nil, so an empty list is [] in JSON.
func each[T, V any](records []T, view func(T) V) []V {
	out := make([]V, 0, len(records))
	for _, r := range records {
		out = append(out, view(r))
	}
	return out
}
