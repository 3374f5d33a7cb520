package service

import (
	"context"
	"time"

	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's signing keys: made on first use (a push delivery or a
// read of them), rotated on request, published as public keys only.

// SigningKeys answers GET /api/v1/signing-keys, making the namespace's
// first key if it has none.
func (s *Service) SigningKeys(ctx context.Context, ns string) (*wire.WebhookKeyList, error) {
	set, err := s.signingKeys(ctx, ns)
	if err != nil {
		return nil, err
	}
	return s.signingKeyView(set), nil
}

// RotateSigningKeys adds a new key; the others sign beside it for
// wire.SigningKeyOverlap.
func (s *Service) RotateSigningKeys(ctx context.Context, ns string) (*wire.WebhookKeyList, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	set, err := s.addSigningKey(ctx, ns, false)
	if err != nil {
		return nil, err
	}
	return s.signingKeyView(set), nil
}

// SigningKeySet is ns's keys to sign with, its first made if need be.
func (s *Service) SigningKeySet(ctx context.Context, ns string) (whsign.KeySet, error) {
	set, err := s.signingKeys(ctx, ns)
	if err != nil {
		return nil, err
	}
	return set.KeySet()
}

func (s *Service) signingKeys(ctx context.Context, ns string) (*engine.SigningKeySet, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	if set := engine.ReadSigningKeys(s.node.DB(), ns); len(set.Keys) > 0 {
		return set, nil
	}
	return s.addSigningKey(ctx, ns, true)
}

func (s *Service) addSigningKey(ctx context.Context, ns string, first bool) (*engine.SigningKeySet, error) {
	id := s.NewID("whk_")
	k, err := whsign.NewEd25519Key(id)
	if err != nil {
		return nil, err
	}
	return engine.SigningKeysAdd.Propose(ctx, s.node, &engine.SigningKeysCmd{NS: ns,
		Key: engine.SigningKey{ID: id, Secret: k.Secret()}, OverlapNs: int64(wire.SigningKeyOverlap), First: first})
}

// signingKeyView is the public part of the keys still signing now.
func (s *Service) signingKeyView(set *engine.SigningKeySet) *wire.WebhookKeyList {
	out := &wire.WebhookKeyList{Keys: []wire.WebhookKey{}}
	ks, err := set.KeySet()
	if err != nil {
		return out
	}
	now := s.cfg.Clock.Now()
	for _, k := range ks {
		if !k.NotAfter.IsZero() && !now.Before(k.NotAfter) {
			continue
		}
		p := k.Public()
		v := wire.WebhookKey{ID: p.ID, Scheme: string(p.Scheme), Key: p.Key}
		if !p.NotAfter.IsZero() {
			t := p.NotAfter.UTC().Truncate(time.Second)
			v.NotAfter = &t
		}
		out.Keys = append(out.Keys, v)
	}
	return out
}
