package service

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/golang-jwt/jwt/v5"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// EnsureSigningKey creates the first signing key if there is none. The key
// is generated here, outside the state machine, and replicated as a command.
func (s *Service) EnsureSigningKey(ctx context.Context) error {
	_, err := ViewValue(s, func(r pebble.Reader) (state.SigningKey, error) { return state.LoadActiveSigningKey(r) })
	if apierr.CodeOf(err) != apierr.NotFound {
		return err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return fmt.Errorf("control: generate signing key: %w", err)
	}
	cmd := state.AddSigningKeyCmd{Key: state.SigningKey{ID: NewID("sk_"), Seed: seed}, OnlyIfNone: true}
	k, err := propose(ctx, s, state.OpAddSigningKey, &cmd)
	if err != nil {
		return fmt.Errorf("control: add signing key: %w", err)
	}
	s.log.Info("signing key ready", "kid", k.ID)
	return nil
}

// claimsOf are the JWT claims of key k.
func claimsOf(k state.APIKey) tenancy.KeyClaims {
	c := tenancy.KeyClaims{
		TenantID:   k.TenantID,
		Role:       k.Role,
		Namespaces: k.Namespaces,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:   tenancy.Issuer,
			Subject:  k.ID,
			IssuedAt: jwt.NewNumericDate(k.CreatedAt),
		},
	}
	if k.Generation > 0 {
		c.ID = strconv.FormatUint(k.Generation, 10)
		if k.RotatedAt != nil {
			c.IssuedAt = jwt.NewNumericDate(*k.RotatedAt)
		}
	}
	if k.ExpiresAt != nil {
		c.ExpiresAt = jwt.NewNumericDate(*k.ExpiresAt)
	}
	if len(k.Namespaces) > 0 {
		c.DefaultNamespace = k.Namespaces[0]
		if k.Namespaces[0] == tenancy.AllNamespaces {
			c.DefaultNamespace = tenancy.DefaultNamespace
		}
	}
	return c
}

// Sign makes the token of key k with the active signing key.
func (s *Service) Sign(k state.APIKey) (string, error) {
	sk, err := ViewValue(s, func(r pebble.Reader) (state.SigningKey, error) { return state.LoadActiveSigningKey(r) })
	if err != nil {
		return "", fmt.Errorf("control: signing key: %w", err)
	}
	claims := claimsOf(k)
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, &claims)
	t.Header["kid"] = sk.ID
	tok, err := t.SignedString(sk.Private())
	if err != nil {
		return "", fmt.Errorf("control: sign key %s: %w", k.ID, err)
	}
	return tok, nil
}

// VerifyKey checks a token the way a gateway does: signed by one of the
// control plane's signing keys that has not retired, well-formed claims,
// not expired, not revoked, and a secret of the key that still works
// (its current one, or one in its grace period after a rotation). Any
// failure is an apierr Unauthenticated error.
func (s *Service) VerifyKey(ctx context.Context, token string) (*tenancy.KeyClaims, error) {
	claims := &tenancy.KeyClaims{}
	now := s.cfg.Clock.Now()
	err := s.View(func(r pebble.Reader) error {
		keyfunc := func(t *jwt.Token) (any, error) {
			kid, _ := t.Header["kid"].(string)
			k, err := state.LoadSigningKey(r, kid)
			if err != nil {
				return nil, err
			}
			if !k.Usable(now) {
				return nil, fmt.Errorf("signing key %s is retired", kid)
			}
			return k.Public(), nil
		}
		_, err := jwt.ParseWithClaims(token, claims, keyfunc, jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
			jwt.WithTimeFunc(func() time.Time { return now }))
		if err != nil {
			return apierr.New(apierr.Unauthenticated, "invalid key: %v", err)
		}
		if err := claims.CheckAnyRole(); err != nil {
			return apierr.New(apierr.Unauthenticated, "invalid key: %v", err)
		}
		revoked, err := state.IsRevoked(r, claims.Subject)
		if err != nil {
			return err
		}
		if revoked {
			return apierr.New(apierr.Unauthenticated, "key %s is revoked", claims.Subject)
		}
		return state.CheckSecret(r, claims, now)
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// JWKS is the public half of every signing key that has not retired, for
// gateways to verify API keys without calling the control plane.
func (s *Service) JWKS(ctx context.Context) (tenancy.JWKS, error) {
	keys, err := ViewValue(s, state.ListSigningKeys)
	if err != nil {
		return tenancy.JWKS{}, err
	}
	return state.JWKSOf(keys, s.cfg.Clock.Now()), nil
}
