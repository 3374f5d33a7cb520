package control

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// CreateNamespace creates a namespace of tenant tid and places it on the
// least loaded shard (fewest namespaces for its capacity; see placement).
func (s *Server) CreateNamespace(ctx context.Context, tid, name string) (Namespace, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return Namespace{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if err := tenancy.ValidateNamespace(name); err != nil {
		return Namespace{}, apierr.Field("name", "%v", err)
	}
	cmd := createNamespaceCmd{TenantID: tid, Name: name, placement: s.placement()}
	return propose(ctx, s, opCreateNamespace, &cmd)
}

// Namespaces lists tenant tid's namespaces by name.
func (s *Server) Namespaces(ctx context.Context, tid string) ([]Namespace, error) {
	return viewValue(s, func(r pebble.Reader) ([]Namespace, error) {
		if _, err := findTenant(r, tid); err != nil {
			return nil, err
		}
		return listNamespaces(r, tid)
	})
}

// Namespace returns namespace name of tenant tid with where to reach its
// shard, which is configuration or registration, not part of the
// namespace, and so is filled in when read: ShardAddr is the configured
// address of a static shard, or else the first registered member's;
// ShardMembers are every registered member's HTTP address, which a
// gateway tries when gossip names no leader.
func (s *Server) Namespace(ctx context.Context, tid, name string) (wire.NamespacePlacement, error) {
	return viewValue(s, func(r pebble.Reader) (wire.NamespacePlacement, error) {
		if _, err := findTenant(r, tid); err != nil {
			return wire.NamespacePlacement{}, err
		}
		ns, err := loadNamespace(r, tid, name)
		if err != nil {
			return wire.NamespacePlacement{}, err
		}
		addr, members, err := s.shardAddrs(r, ns.ShardID)
		if err != nil {
			return wire.NamespacePlacement{}, err
		}
		return placementView(ns, addr, members), nil
	})
}
