package service

import (
	"context"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// RotatedKey is a rotated key with its new token, shown this once, and
// until when the token it replaced keeps working. HTTP answers it as
// wire.RotatedKey (views.go).
type RotatedKey struct {
	state.KeyRotated
	Key string
}

// RotateKey gives key id of tenant tid a new secret (token) for the same
// id, name, role, namespaces and expiry, signed with the current signing
// key. The secret it replaces keeps working for req's grace_period (0 by
// default, at most wire.MaxGracePeriod), then is refused. A key of
// another tenant is NotFound; a revoked or expired one Conflict.
func (s *Service) RotateKey(ctx context.Context, tid, id string, req wire.RotateKeyRequest) (RotatedKey, error) {
	grace, err := parseBoundedDuration("grace_period", req.GracePeriod, 0, wire.MaxGracePeriod)
	if err != nil {
		return RotatedKey{}, err
	}
	if tenancy.ValidateTenantID(tid) != nil || !keyIDRE.MatchString(id) {
		return RotatedKey{}, apierr.New(apierr.NotFound, "key %q not found", id)
	}
	res, err := propose(ctx, s, state.OpRotateKey, &state.RotateKeyCmd{TenantID: tid, ID: id, Grace: grace})
	if err != nil {
		return RotatedKey{}, err
	}
	tok, err := s.Sign(res.Key)
	if err != nil {
		return RotatedKey{}, err
	}
	return RotatedKey{KeyRotated: res, Key: tok}, nil
}

// RecordKeyUse records when a gateway saw keys in use (see
// wire.KeyUsage). A malformed entry is a 400 naming it; uses of keys that
// do not exist are skipped.
func (s *Service) RecordKeyUse(ctx context.Context, u wire.KeyUsage) error {
	if len(u.Keys) > wire.MaxKeyUses {
		return apierr.Field("keys", "a report holds at most %d keys, not %d", wire.MaxKeyUses, len(u.Keys))
	}
	cmd := state.RecordKeyUseCmd{Uses: make([]state.KeyUse, 0, len(u.Keys))}
	for i, k := range u.Keys {
		field := func(name string) string { return fmt.Sprintf("keys[%d].%s", i, name) }
		switch {
		case tenancy.ValidateTenantID(k.TenantID) != nil:
			return apierr.Field(field("tenant_id"), "%q is not a tenant id", k.TenantID)
		case !keyIDRE.MatchString(k.KeyID):
			return apierr.Field(field("key_id"), "%q is not a key id", k.KeyID)
		case k.At.Before(time.Unix(0, 0)):
			return apierr.Field(field("at"), "at must be a time after 1970")
		}
		cmd.Uses = append(cmd.Uses, state.KeyUse{TenantID: k.TenantID, ID: k.KeyID, At: k.At.UTC()})
	}
	if len(cmd.Uses) == 0 {
		return nil
	}
	_, err := propose(ctx, s, state.OpRecordKeyUse, &cmd)
	return err
}
