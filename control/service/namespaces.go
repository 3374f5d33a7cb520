package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// NamespaceRequest asks for a new namespace with its settings.
type NamespaceRequest = wire.CreateNamespaceRequest

// NamespaceUpdate changes some of a namespace's settings.
type NamespaceUpdate = wire.UpdateNamespaceRequest

// CreateNamespace creates namespace name of tenant tid with no settings.
func (s *Service) CreateNamespace(ctx context.Context, tid, name string) (state.Namespace, error) {
	return s.CreateNamespaceWith(ctx, tid, NamespaceRequest{Name: name})
}

// CreateNamespaceWith creates a namespace of tenant tid with the settings
// of req and places it on the least loaded shard (fewest namespaces for
// its capacity; see placement). A bad field is a 400 naming it.
func (s *Service) CreateNamespaceWith(ctx context.Context, tid string, req NamespaceRequest) (state.Namespace, error) {
	return s.CreateNamespaceOn(ctx, tid, req, "")
}

// CreateNamespaceOn is CreateNamespaceWith on shard, the tenant's own
// self-hosted shard, when it is not empty. A shard an earlier namespace
// of the name moved away from is cleared of its tombstone first
// (move_tombstone.go); a 503 when it cannot be, and nothing is created.
func (s *Service) CreateNamespaceOn(ctx context.Context, tid string, req NamespaceRequest, shard string) (state.Namespace, error) {
	if shard != "" && !ShardIDRE.MatchString(shard) {
		return state.Namespace{}, apierr.Field("shard", "shard %q must be 1-63 letters, digits, '.', '_' or '-'", shard)
	}
	if tenancy.ValidateTenantID(tid) != nil {
		return state.Namespace{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if err := tenancy.ValidateNamespace(req.Name); err != nil {
		return state.Namespace{}, apierr.Field("name", "%v", err)
	}
	if err := checkDescription(req.Description); err != nil {
		return state.Namespace{}, err
	}
	retention, _, err := parseRetention(req.Retention)
	if err != nil {
		return state.Namespace{}, err
	}
	if retention > 0 && shard != "" {
		if err := s.refuseUnjoined(tid, shard); err != nil {
			return state.Namespace{}, err
		}
	}
	cmd := state.CreateNamespaceCmd{TenantID: tid, Name: req.Name, Description: req.Description, Retention: retention,
		DeletionProtection: req.DeletionProtection, Shard: shard, Placement: s.Placement()}
	if err := s.clearTombstone(ctx, &cmd); err != nil {
		return state.Namespace{}, err
	}
	return propose(ctx, s, state.OpCreateNamespace, &cmd)
}

// refuseUnjoined refuses a retention for a new namespace on tenant tid's
// self-hosted shard no node has joined (409): the gateway applies it on
// the shard once control created the namespace, which nothing could
// answer. Checked before proposing, as nodes only ever join a shard that
// holds namespaces (another tenant's or an unknown shard is left to the
// create's own 404).
func (s *Service) refuseUnjoined(tid, shard string) error {
	sh, self, err := viewValue2(s, func(r pebble.Reader) (state.OwnedShard, bool, error) {
		return state.SelfHostedShard(r, tid, shard)
	})
	if err != nil || !self || len(sh.Nodes) > 0 {
		return err
	}
	return apierr.OfField(apierr.Conflict, "retention",
		"no node of shard %q has joined yet: create it without a retention, or after a node joins", shard)
}

// UpdateNamespace changes the settings req names (see
// wire.UpdateNamespaceRequest) and returns the namespace as it is then.
// An unknown namespace (or tenant) is a 404; a bad field a 400 naming it,
// and nothing changes.
func (s *Service) UpdateNamespace(ctx context.Context, tid, name string, req NamespaceUpdate) (state.Namespace, error) {
	if tenancy.ValidateTenantID(tid) != nil || tenancy.ValidateNamespace(name) != nil {
		return state.Namespace{}, apierr.New(apierr.NotFound, "namespace %q not found", name)
	}
	cmd := state.UpdateNamespaceCmd{TenantID: tid, Name: name}
	if present(req.Description) {
		d, err := parseDescription(req.Description)
		if err != nil {
			return state.Namespace{}, err
		}
		cmd.Description = &d
	}
	if present(req.Retention) {
		d, _, err := parseRetention(req.Retention)
		if err != nil {
			return state.Namespace{}, err
		}
		cmd.Retention = &d
	}
	if present(req.DeletionProtection) {
		on, err := parseSwitch("deletion_protection", req.DeletionProtection)
		if err != nil {
			return state.Namespace{}, err
		}
		cmd.DeletionProtection = &on
	}
	return propose(ctx, s, state.OpUpdateNamespace, &cmd)
}

// DeleteNamespace deletes the record of namespace name of tenant tid,
// unless its deletion protection is on (409 deletion_protected). It does
// not touch the shard: the gateway empties the namespace there first.
func (s *Service) DeleteNamespace(ctx context.Context, tid, name string) error {
	if tenancy.ValidateTenantID(tid) != nil || tenancy.ValidateNamespace(name) != nil {
		return apierr.New(apierr.NotFound, "namespace %q not found", name)
	}
	_, err := propose(ctx, s, state.OpDeleteNamespace, &state.DeleteNamespaceCmd{TenantID: tid, Name: name})
	return err
}

// Namespaces lists tenant tid's namespaces by name.
func (s *Service) Namespaces(ctx context.Context, tid string) ([]state.Namespace, error) {
	return ViewValue(s, func(r pebble.Reader) ([]state.Namespace, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return nil, err
		}
		return state.ListNamespaces(r, tid)
	})
}

// Namespace returns namespace name of tenant tid with where to reach its
// shard, which is configuration or registration, not part of the
// namespace, and so is filled in when read: ShardAddr is the configured
// address of a static shard, or else the first registered member's;
// ShardMembers are every registered member's HTTP address, which a
// gateway tries when gossip names no leader. Moving is whether a move of
// it has not ended: a gateway asks before it empties the namespace for a
// delete, which control would refuse meanwhile. Shard names the tenant's
// own self-hosted shard, and Unjoined says no node has joined it, so
// nothing can be on it.
func (s *Service) Namespace(ctx context.Context, tid, name string) (wire.NamespacePlacement, error) {
	return ViewValue(s, func(r pebble.Reader) (wire.NamespacePlacement, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return wire.NamespacePlacement{}, err
		}
		ns, err := state.LoadNamespace(r, tid, name)
		if err != nil {
			return wire.NamespacePlacement{}, err
		}
		addr, members, err := s.shardAddrs(r, ns.ShardID)
		if err != nil {
			return wire.NamespacePlacement{}, err
		}
		_, moving := state.RunningMove(r, tid, name)
		v := state.PlacementView(ns, addr, members, moving)
		sh, self, err := state.SelfHostedShard(r, tid, ns.ShardID)
		if err != nil {
			return wire.NamespacePlacement{}, err
		}
		if self {
			v.Shard = ns.ShardID
			v.Unjoined = len(sh.Nodes) == 0
		}
		return v, nil
	})
}
