package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Trust bundles (wire.TrustBundle): what a self-hosted shard's nodes need
// to judge their tenant's API keys while the hosted service is out of
// reach. A gateway fetches one per self-hosted shard it tunnels to and
// pushes it to the shard's nodes. It holds the tenant's own records and
// Public ones only, all read from one snapshot, so its parts agree.

// TrustBundle builds the trust bundle of tenant tid's self-hosted shard
// sid. Anything else (a hosted shard, another tenant's, a revoked or
// unknown one, an unknown tenant) is the same 404, which tells nothing of
// whether the shard exists.
func (s *Service) TrustBundle(ctx context.Context, tid, sid string) (wire.TrustBundle, error) {
	notFound := apierr.New(apierr.NotFound, "shard %q not found", sid)
	if tenancy.ValidateTenantID(tid) != nil || !ShardIDRE.MatchString(sid) {
		return wire.TrustBundle{}, notFound
	}
	now := s.cfg.Clock.Now().UTC()
	return ViewValue(s, func(r pebble.Reader) (wire.TrustBundle, error) {
		if _, ok, err := state.SelfHostedShard(r, tid, sid); err != nil || !ok {
			if err == nil {
				err = notFound
			}
			return wire.TrustBundle{}, err
		}
		out := wire.TrustBundle{TenantID: tid, ShardID: sid, IssuedAt: now}
		var err error
		if out.JWKS, err = state.JWKSAt(r, now); err != nil {
			return wire.TrustBundle{}, err
		}
		if out.Revocations, err = state.TenantRevocations(r, tid); err != nil {
			return wire.TrustBundle{}, err
		}
		if out.Roles, err = state.TenantRoles(r, tid); err != nil {
			return wire.TrustBundle{}, err
		}
		out.Namespaces, err = state.NamespacesOn(r, tid, sid)
		return out, err
	})
}
