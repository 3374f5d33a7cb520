package control

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/wire"
)

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

// tenantNamespaceViews are namespaceView of tenant tid's namespaces, with
// Shard named for those on the tenant's own self-hosted shards (a hosted
// shard's id stays out of what tenants see). A shard's owner never
// changes while a namespace is on it, so this separate read agrees with
// the one that gave the records.
func (s *Server) tenantNamespaceViews(tid string, list ...Namespace) ([]wire.NamespacePlacement, error) {
	return viewValue(s, func(r pebble.Reader) ([]wire.NamespacePlacement, error) {
		self := map[string]bool{}
		out := make([]wire.NamespacePlacement, 0, len(list))
		for _, ns := range list {
			on, seen := self[ns.ShardID]
			if !seen {
				var err error
				if _, on, err = selfHostedShard(r, tid, ns.ShardID); err != nil {
					return nil, err
				}
				self[ns.ShardID] = on
			}
			v := namespaceView(ns)
			if on {
				v.Shard = ns.ShardID
			}
			out = append(out, v)
		}
		return out, nil
	})
}

// each is view of every record: never nil, so an empty list is [] in JSON.
func each[T, V any](records []T, view func(T) V) []V {
	out := make([]V, 0, len(records))
	for _, r := range records {
		out = append(out, view(r))
	}
	return out
}
