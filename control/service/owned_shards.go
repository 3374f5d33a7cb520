package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Self-hosted shards: a tenant's owner mints a join token, which creates
// the shard's record (owned by the tenant) at once; the customer's nodes
// trade the token for certificates signed by Config.SelfHostedCA; the
// tenant places namespaces on the shard by naming it, and least-loaded
// Placement never chooses it, so no other tenant's namespace lands there.

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

const (
	// joinTokenPrefix marks join tokens, so a leaked one is recognizable.
	joinTokenPrefix = "jst_"
	maxShardNameLen = 100
)

// CreateJoinToken mints a join token for a new self-hosted shard of
// tenant tid. The token is in the answer only.
func (s *Service) CreateJoinToken(ctx context.Context, tid string, req wire.CreateJoinTokenRequest) (wire.JoinToken, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return wire.JoinToken{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	name := strings.TrimSpace(req.Name)
	if name == "" || len(name) > maxShardNameLen || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return wire.JoinToken{}, apierr.Field("name", "name must be 1-%d printable characters", maxShardNameLen)
	}
	nodes, ttl, tok, err := newJoinToken(req.Nodes, req.ExpiresIn)
	if err != nil {
		return wire.JoinToken{}, err
	}
	cmd := state.CreateJoinTokenCmd{TenantID: tid, ShardID: NewID("sh_"), Name: name, Hash: hashToken(tok), TTL: ttl, Nodes: nodes}
	out, err := propose(ctx, s, state.OpCreateJoinToken, &cmd)
	if err != nil {
		return wire.JoinToken{}, err
	}
	out.Token = tok
	return out, nil
}

// newJoinToken checks a token's terms (nodes: 0 is 1; expires_in: absent
// is the default) and draws its secret.
func newJoinToken(nodes int, expiresIn json.RawMessage) (int, time.Duration, string, error) {
	ttl, ok, err := wire.ParseDuration(expiresIn)
	switch {
	case err != nil || (ok && (ttl < wire.MinJoinTokenTTL || ttl > wire.MaxJoinTokenTTL)):
		return 0, 0, "", apierr.Field("expires_in", "expires_in must be a duration from %s to %s",
			wire.FormatDuration(wire.MinJoinTokenTTL), wire.FormatDuration(wire.MaxJoinTokenTTL))
	case !ok:
		ttl = wire.DefaultJoinTokenTTL
	}
	if nodes == 0 {
		nodes = 1
	}
	if nodes < 1 || nodes > wire.MaxJoinTokenNodes {
		return 0, 0, "", apierr.Field("nodes", "nodes must be 1 to %d", wire.MaxJoinTokenNodes)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	return nodes, ttl, joinTokenPrefix + base64.RawURLEncoding.EncodeToString(secret), nil
}

// Join trades a join token and a certificate request for node nodeID's
// certificate as a member of the token's shard, owned by its tenant. The
// request is checked before the token is spent, so a bad one spends
// nothing.
func (s *Service) Join(ctx context.Context, req wire.JoinRequest) (wire.JoinResponse, error) {
	if s.cfg.SelfHostedCA == nil {
		return wire.JoinResponse{}, apierr.New(apierr.Unavailable, "this control plane does not admit self-hosted shards (no self-hosted CA configured)")
	}
	if !ShardIDRE.MatchString(req.NodeID) {
		return wire.JoinResponse{}, apierr.Field("node_id", "node_id %q must be 1-63 letters, digits, '.', '_' or '-'", req.NodeID)
	}
	if !strings.HasPrefix(req.Token, joinTokenPrefix) {
		return wire.JoinResponse{}, state.ErrBadToken()
	}
	hash := hashToken(req.Token)
	tok, ok, err := viewValue2(s, func(r pebble.Reader) (state.JoinToken, bool, error) { return state.LoadJoinToken(r, hash) })
	if err != nil {
		return wire.JoinResponse{}, err
	}
	if !ok {
		return wire.JoinResponse{}, state.ErrBadToken()
	}
	id := pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: req.NodeID, Tenant: tok.TenantID}
	cert, err := s.cfg.SelfHostedCA.IssueCSR([]byte(req.CSR), id, nil, s.cfg.SelfHostedCertValidity)
	if err != nil {
		return wire.JoinResponse{}, apierr.Field("csr", "%v", err)
	}
	if _, err := propose(ctx, s, state.OpJoinShard, &state.JoinShardCmd{Hash: hash, NodeID: req.NodeID}); err != nil {
		return wire.JoinResponse{}, err
	}
	urls := slices.Clone(s.cfg.TunnelURLs)
	if urls == nil {
		urls = []string{}
	}
	return wire.JoinResponse{Certificate: string(cert), CA: string(s.cfg.SelfHostedCA.CertPEM()),
		ShardID: tok.ShardID, NodeID: req.NodeID, TenantID: tok.TenantID, TunnelURLs: urls}, nil
}

// OwnedShards lists tenant tid's self-hosted shards by id, each with the
// expiry of its join token while that has nodes left to join, and the
// names of the tenant's namespaces placed on it.
func (s *Service) OwnedShards(ctx context.Context, tid string) ([]wire.OwnedShard, error) {
	return ViewValue(s, func(r pebble.Reader) ([]wire.OwnedShard, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return nil, err
		}
		shards, err := state.ListOwnedShards(r, tid)
		if err != nil {
			return nil, err
		}
		placed := map[string][]string{}
		if len(shards) > 0 {
			list, err := state.ListNamespaces(r, tid)
			if err != nil {
				return nil, err
			}
			for _, ns := range list {
				placed[ns.ShardID] = append(placed[ns.ShardID], ns.Name)
			}
		}
		out := make([]wire.OwnedShard, 0, len(shards))
		for _, sh := range shards {
			v := wire.OwnedShard{ID: sh.ID, Name: sh.Name, Nodes: sh.Nodes, Retired: sh.Retired, ExpectedNodes: sh.ExpectedNodes(),
				Namespaces: placed[sh.ID], CreatedAt: sh.CreatedAt}
			if v.Namespaces == nil {
				v.Namespaces = []string{}
			}
			if sh.TokenHash != "" {
				tok, ok, err := state.LoadJoinToken(r, sh.TokenHash)
				if err != nil {
					return nil, err
				}
				if ok {
					v.TokenExpiresAt = &tok.ExpiresAt
				}
			}
			out = append(out, v)
		}
		return out, nil
	})
}

// SelfHostedShards lists every tenant's self-hosted shards, for the
// gateways' tunnel listeners: a node is admitted only while its shard is
// listed here, for the tenant its certificate names.
func (s *Service) SelfHostedShards(ctx context.Context) ([]wire.SelfHostedShard, error) {
	return ViewValue(s, func(r pebble.Reader) ([]wire.SelfHostedShard, error) {
		all, err := state.ListAllOwnedShards(r)
		out := []wire.SelfHostedShard{}
		for _, sh := range all {
			out = append(out, wire.SelfHostedShard{ID: sh.ID, TenantID: sh.TenantID, Nodes: sh.Nodes})
		}
		return out, err
	})
}

// RevokeShard removes tenant tid's self-hosted shard: its record, its
// unspent token; its nodes' certificates are refused from then on by
// every gateway that reads the list. A shard that still holds namespaces
// is a 409: move or delete them first.
func (s *Service) RevokeShard(ctx context.Context, tid, id string) error {
	if tenancy.ValidateTenantID(tid) != nil || !ShardIDRE.MatchString(id) {
		return apierr.New(apierr.NotFound, "shard %q not found", id)
	}
	_, err := propose(ctx, s, state.OpRevokeShard, &state.RevokeShardCmd{TenantID: tid, ShardID: id})
	return err
}

// viewValue2 is view for a query with two results.
func viewValue2[T any](s *Service, fn func(r pebble.Reader) (T, bool, error)) (T, bool, error) {
	var out T
	var ok bool
	err := s.View(func(r pebble.Reader) error {
		var err error
		out, ok, err = fn(r)
		return err
	})
	return out, ok, err
}
