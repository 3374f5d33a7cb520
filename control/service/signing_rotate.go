package service

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// SigningKeys lists every signing key, oldest first: which one is
// current, and when the others retire (or retired).
func (s *Service) SigningKeys(ctx context.Context) (wire.SigningKeyList, error) {
	return ViewValue(s, s.signingKeyList)
}

func (s *Service) signingKeyList(r pebble.Reader) (wire.SigningKeyList, error) {
	keys, err := state.ListSigningKeys(r)
	if err != nil {
		return wire.SigningKeyList{}, err
	}
	active, err := state.ActiveSigningKeyID(r)
	if err != nil {
		return wire.SigningKeyList{}, err
	}
	now := s.cfg.Clock.Now()
	out := wire.SigningKeyList{SigningKeys: make([]wire.SigningKey, 0, len(keys))}
	for _, k := range keys {
		out.SigningKeys = append(out.SigningKeys, wire.SigningKey{Kid: k.ID, CreatedAt: k.CreatedAt, RetiresAt: k.RetiresAt,
			Current: k.ID == active, Retired: k.Retired(now)})
	}
	return out, nil
}

// RotateSigningKey makes a new signing key current: API keys created or
// rotated from now on are signed with it. The key it replaces stays in
// the JWKS, and keeps verifying the keys it signed, for req's
// retire_after (wire.DefaultRetireAfter by default, at most
// wire.MaxRetireAfter); then it retires, and keys it signed that were not
// rotated since stop working. operatorKeyID, when set, is the calling
// operator key: the answer carries it signed again with the new key.
func (s *Service) RotateSigningKey(ctx context.Context, req wire.RotateSigningKeyRequest, operatorKeyID string) (wire.RotatedSigningKeys, error) {
	after, err := parseBoundedDuration("retire_after", req.RetireAfter, wire.DefaultRetireAfter, wire.MaxRetireAfter)
	if err != nil {
		return wire.RotatedSigningKeys{}, err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return wire.RotatedSigningKeys{}, fmt.Errorf("control: generate signing key: %w", err)
	}
	cmd := state.RotateSigningKeyCmd{Key: state.SigningKey{ID: NewID("sk_"), Seed: seed}, RetireAfter: after}
	k, err := propose(ctx, s, state.OpRotateSigning, &cmd)
	if err != nil {
		return wire.RotatedSigningKeys{}, err
	}
	s.log.Info("signing key rotated", "kid", k.ID, "retire_after", after)
	var out wire.RotatedSigningKeys
	if out.SigningKeyList, err = s.SigningKeys(ctx); err != nil {
		return wire.RotatedSigningKeys{}, err
	}
	if operatorKeyID != "" {
		op, err := ViewValue(s, func(r pebble.Reader) (state.APIKey, error) { return state.LoadKey(r, "", operatorKeyID) })
		if err != nil {
			return wire.RotatedSigningKeys{}, err
		}
		if op.Role != tenancy.RoleOperator || op.RevokedAt != nil {
			return wire.RotatedSigningKeys{}, apierr.New(apierr.Forbidden, "key %s is not a working operator key", operatorKeyID)
		}
		if out.OperatorKey, err = s.Sign(op); err != nil {
			return wire.RotatedSigningKeys{}, err
		}
	}
	return out, nil
}
