package service

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/wire"
)

// HTTP answers are wire values, built here from control's own records so
// that what is stored and what is sent may change apart. Registered
// shards are answered as their stored records; namespaces as
// wire.NamespacePlacement, so the operator and gateways see their
// shard_id, which the tenant's wire.Namespace leaves out.

// TenantNamespaceViews are NamespaceView of tenant tid's namespaces, with
// Shard named for those on the tenant's own self-hosted shards (a hosted
// shard's id stays out of what tenants see). A shard's owner never
// changes while a namespace is on it, so this separate read agrees with
// the one that gave the records.
func (s *Service) TenantNamespaceViews(tid string, list ...state.Namespace) ([]wire.NamespacePlacement, error) {
	return ViewValue(s, func(r pebble.Reader) ([]wire.NamespacePlacement, error) {
		self := map[string]bool{}
		out := make([]wire.NamespacePlacement, 0, len(list))
		for _, ns := range list {
			on, seen := self[ns.ShardID]
			if !seen {
				var err error
				if _, on, err = state.SelfHostedShard(r, tid, ns.ShardID); err != nil {
					return nil, err
				}
				self[ns.ShardID] = on
			}
			v := state.NamespaceView(ns)
			if on {
				v.Shard = ns.ShardID
			}
			out = append(out, v)
		}
		return out, nil
	})
}
