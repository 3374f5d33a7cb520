package control

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
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

// Namespace returns namespace name of tenant tid with its shard's
// addresses.
func (s *Server) Namespace(ctx context.Context, tid, name string) (NamespaceInfo, error) {
	return viewValue(s, func(r pebble.Reader) (NamespaceInfo, error) {
		if _, err := findTenant(r, tid); err != nil {
			return NamespaceInfo{}, err
		}
		ns, err := loadNamespace(r, tid, name)
		if err != nil {
			return NamespaceInfo{}, err
		}
		addr, members, err := s.shardAddrs(r, ns.ShardID)
		if err != nil {
			return NamespaceInfo{}, err
		}
		return NamespaceInfo{Namespace: ns, ShardAddr: addr, ShardMembers: members}, nil
	})
}
