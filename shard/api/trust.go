package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// trustPath is where a hosted gateway pushes a self-hosted node its
// tenant's trust bundle (wire.TrustBundle), over the node's tunnel.
const trustPath = "/internal/v1/trust"

// trustRoutes: any node of the shard takes a push for itself, leader or
// follower: a bundle is each node's own copy, not replicated state.
func (s *Server) trustRoutes() {
	s.app.Post(trustPath, pki.Require(pki.Roles(pki.RoleGateway), &localGateway), s.putTrust)
}

// putTrust checks a pushed bundle against this node and keeps it (204).
// Only a gateway that proved itself over TLS (a tunnel stream carries
// the gateway's TLS identity) may push: a request over the Unix socket
// reads as the local gateway, and the local API must never be able to
// hand the node the trust it then judges keys with. A refused bundle
// changes nothing.
func (s *Server) putTrust(c *fiber.Ctx) error {
	if c.Context().LocalAddr().Network() == "unix" {
		return apierr.New(apierr.Forbidden, "trust bundles are taken from a hosted gateway over TLS or the tunnel, never over the node's Unix socket")
	}
	if s.cfg.Tenant == "" || s.trust == nil {
		return apierr.New(apierr.Conflict, "only self-hosted shard nodes take trust bundles: this node's certificate names no tenant")
	}
	// Read whole (streamedBodies bounds it to MaxRequestBody) before
	// refusing: an answer while the gateway still writes would reach it
	// as a reset connection, not as the 413 naming the limit.
	body := c.Body()
	if len(body) > wire.MaxTrustBundleBytes {
		return tooLargeBundle(len(body))
	}
	var b wire.TrustBundle
	if err := decode(c, &b); err != nil {
		return err
	}
	if err := s.checkBundle(&b); err != nil {
		return err
	}
	if err := s.trust.Put(b, time.Now()); err != nil {
		return apierr.New(apierr.Internal, "keeping the trust bundle: %v", err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func tooLargeBundle(n int) error {
	return apierr.New(apierr.TooLarge, "a trust bundle may be at most %d bytes (wire.MaxTrustBundleBytes), not %d", wire.MaxTrustBundleBytes, n)
}

// checkBundle refuses a bundle that is not this node's: another tenant's
// or another shard's (403, as a caller may not hand a node what is not
// its own), or one this node could not judge keys with (400 naming the
// field).
func (s *Server) checkBundle(b *wire.TrustBundle) error {
	if b.TenantID != s.cfg.Tenant {
		return apierr.OfField(apierr.Forbidden, "tenant_id", "this node belongs to another tenant than %q", b.TenantID)
	}
	if b.ShardID != s.cfg.ShardID {
		return apierr.OfField(apierr.Forbidden, "shard_id", "this node is of shard %s, not %q", s.cfg.ShardID, b.ShardID)
	}
	if err := checkJWKS(b.JWKS); err != nil {
		return err
	}
	for i, rv := range b.Revocations.Roles {
		if rv.TenantID != "" && rv.TenantID != b.TenantID {
			return apierr.Field(fmt.Sprintf("revocations.roles[%d].tenant_id", i), "a roles version of another tenant than the bundle's")
		}
	}
	for i, p := range b.Namespaces {
		if p.ShardID != s.cfg.ShardID {
			return apierr.Field(fmt.Sprintf("namespaces[%d].shard_id", i), "namespace %q is placed on shard %q, not on this shard (%s)", p.Name, p.ShardID, s.cfg.ShardID)
		}
	}
	return nil
}

// checkJWKS refuses what is not a JSON Web Key Set: an object with a
// "keys" array of objects.
func checkJWKS(raw json.RawMessage) error {
	var set map[string]json.RawMessage
	if err := json.Unmarshal(raw, &set); err != nil || set == nil {
		return apierr.Field("jwks", `jwks must be a JSON object with a "keys" array (a JSON Web Key Set)`)
	}
	var keys []json.RawMessage
	if err := json.Unmarshal(set["keys"], &keys); err != nil || keys == nil {
		return apierr.Field("jwks.keys", `jwks must have a "keys" array (a JSON Web Key Set)`)
	}
	for i, k := range keys {
		if !bytes.HasPrefix(bytes.TrimSpace(k), []byte("{")) {
			return apierr.Field(fmt.Sprintf("jwks.keys[%d]", i), "a key of a JSON Web Key Set must be a JSON object")
		}
	}
	return nil
}
