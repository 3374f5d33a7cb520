package service

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// keyIDRE is the shape of a key id: "key_" and a lowercase ULID.
var keyIDRE = regexp.MustCompile(`^key_[0-9a-z]{26}$`)

// MaxKeyNamespaces bounds the namespaces one key may name.
const MaxKeyNamespaces = 100

// CreateKey creates an API key of tenant tid. Its token is in the result and
// nowhere else. Its role is a built-in role or one of the tenant's custom
// roles. Namespaces is ["*"] (every namespace; the default is
// "default") or a list of existing namespaces (the first is the default).
// ExpiresAt, absent or null for a key that never expires, is an RFC 3339
// time kept to the whole second (a fraction is dropped), the precision of
// the token's exp claim; the create_key command checks it is ahead, and at
// most maxKeyLifetimeYears so, at the time it is applied.
func (s *Service) CreateKey(ctx context.Context, tid string, req wire.CreateKeyRequest) (state.CreatedKey, error) {
	exp, err := parseExpiresAt(req.ExpiresAt)
	if err != nil {
		return state.CreatedKey{}, err
	}
	if tenancy.ValidateTenantID(tid) != nil {
		return state.CreatedKey{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if err := tenancy.ValidateKeyName(req.Name); err != nil {
		return state.CreatedKey{}, apierr.Field("name", "%v", err)
	}
	role, err := checkKeyRole(req.Role)
	if err != nil {
		return state.CreatedKey{}, err
	}
	if err := checkKeyNamespaces(req.Namespaces); err != nil {
		return state.CreatedKey{}, err
	}
	if err := checkDescription(req.Description); err != nil {
		return state.CreatedKey{}, err
	}
	cmd := state.CreateKeyCmd{ID: NewID("key_"), TenantID: tid, Name: req.Name, Role: role, Namespaces: req.Namespaces,
		ExpiresAt: wholeSecond(exp), Description: req.Description}
	return s.createKey(ctx, cmd)
}

// parseExpiresAt decodes an optional RFC 3339 expires_at; absent or null is
// nil (the key never expires).
func parseExpiresAt(raw json.RawMessage) (*time.Time, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var t time.Time
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, apierr.Field("expires_at", "expires_at must be an RFC 3339 time like 2026-02-11T10:00:00Z")
	}
	return &t, nil
}

// wholeSecond is t in UTC without its fraction of a second: a JWT's exp is
// whole seconds, and the stored expiry must be the one the token enforces.
func wholeSecond(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Second)
	return &u
}

// checkKeyNamespaces checks the shape of a key's namespace list; the
// create_key command checks that the namespaces exist.
func checkKeyNamespaces(list []string) error {
	switch {
	case len(list) == 0:
		return apierr.Field("namespaces", "a key must name at least one namespace (or \"*\")")
	case len(list) > MaxKeyNamespaces:
		return apierr.Field("namespaces", "a key may name at most %d namespaces", MaxKeyNamespaces)
	case slices.Contains(list, tenancy.AllNamespaces) && len(list) > 1:
		return apierr.Field("namespaces", "\"*\" already means every namespace; name nothing else with it")
	}
	for i, ns := range list {
		if ns == tenancy.AllNamespaces {
			continue
		}
		if err := tenancy.ValidateNamespace(ns); err != nil {
			return apierr.Field("namespaces", "%v", err)
		}
		if slices.Contains(list[:i], ns) {
			return apierr.Field("namespaces", "namespace %q is listed twice", ns)
		}
	}
	return nil
}

// IssueOperatorKey creates an operator key (role operator, no tenant) and
// returns its token, the only copy.
func (s *Service) IssueOperatorKey(ctx context.Context, name string) (string, error) {
	if err := tenancy.ValidateKeyName(name); err != nil {
		return "", apierr.Field("name", "%v", err)
	}
	k, err := s.createKey(ctx, state.CreateKeyCmd{ID: NewID("key_"), Name: name, Role: tenancy.RoleOperator})
	return k.Key, err
}

func (s *Service) createKey(ctx context.Context, cmd state.CreateKeyCmd) (state.CreatedKey, error) {
	k, err := propose(ctx, s, state.OpCreateKey, &cmd)
	if err != nil {
		return state.CreatedKey{}, err
	}
	// A replay's key is the first request's, whose tenant its kept result
	// leaves out; signing it again gives the first token while the same
	// signing key is active (Ed25519 signatures are deterministic), and a
	// token that works as well after a rotation of signing keys.
	k.TenantID = cmd.TenantID
	tok, err := s.Sign(k)
	if err != nil {
		return state.CreatedKey{}, err
	}
	return state.CreatedKey{APIKey: k, Key: tok}, nil
}

// Keys lists tenant tid's keys, revoked ones included, oldest first.
func (s *Service) Keys(ctx context.Context, tid string) ([]state.APIKey, error) {
	return ViewValue(s, func(r pebble.Reader) ([]state.APIKey, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return nil, err
		}
		return state.ListKeys(r, tid)
	})
}

// Key returns key id of tenant tid; a key of another tenant, or an
// unknown or malformed id, is apierr NotFound.
func (s *Service) Key(ctx context.Context, tid, id string) (state.APIKey, error) {
	return ViewValue(s, func(r pebble.Reader) (state.APIKey, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return state.APIKey{}, err
		}
		if !keyIDRE.MatchString(id) {
			return state.APIKey{}, apierr.New(apierr.NotFound, "key %q not found", id)
		}
		k, err := state.LoadKey(r, tid, id)
		if err != nil {
			return state.APIKey{}, err
		}
		return state.WithLastUse(r, k)
	})
}

// RevokeKey revokes key id of tenant tid; tid "" names an operator key. A
// key of another tenant is apierr NotFound. Revoking twice is not an error.
func (s *Service) RevokeKey(ctx context.Context, tid, id string) error {
	if (tid != "" && tenancy.ValidateTenantID(tid) != nil) || !keyIDRE.MatchString(id) {
		return apierr.New(apierr.NotFound, "key %q not found", id)
	}
	_, err := propose(ctx, s, state.OpRevokeKey, &state.RevokeKeyCmd{TenantID: tid, ID: id})
	return err
}

// Revocations is every revoked key id and the list's version.
func (s *Service) Revocations(ctx context.Context) (state.Revocations, error) {
	return ViewValue(s, state.LoadRevocations)
}
