package admin

import (
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Replacing and adding a self-hosted shard's nodes, through control: a
// token that joins more nodes to one of the tenant's shards, and the
// removal of one node (its id retired). Both are the owner's alone, like
// minting and revoking: they change who holds the tenant's data.

// shardPartRE is what a shard or node id may be (the identities'
// rule, internal/pki): anything else names no shard or node, and is
// refused here before control is asked.
var shardPartRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// shardParam is the route's :id, checked; a copy (params alias request
// memory).
func shardParam(c *fiber.Ctx, name, what string) (string, error) {
	v := strings.Clone(c.Params(name))
	if !shardPartRE.MatchString(v) {
		return "", apierr.Field(name, "%s %q must be 1-63 letters, digits, '.', '_' or '-'", what, v)
	}
	return v, nil
}

func (a *Admin) AddShardNodes(c *fiber.Ctx, r *admitted.Request) error {
	if err := ownerOnly(r, "mint shard join tokens"); err != nil {
		return err
	}
	id, err := shardParam(c, "id", "shard id")
	if err != nil {
		return err
	}
	var in wire.AddNodesRequest // every field optional: no body is fine
	if err := apierr.DecodeJSON(c.Request().Body(), &in, true); err != nil {
		return err
	}
	out, err := a.control.AddShardNodes(a.ctx, r.RequestID, r.Key.TenantID, id, in)
	if err != nil {
		return a.tell(r, err)
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (a *Admin) RemoveShardNode(c *fiber.Ctx, r *admitted.Request) error {
	if err := ownerOnly(r, "remove a shard's nodes"); err != nil {
		return err
	}
	id, err := shardParam(c, "id", "shard id")
	if err != nil {
		return err
	}
	node, err := shardParam(c, "node", "node id")
	if err != nil {
		return err
	}
	if err := a.control.RemoveShardNode(a.ctx, r.RequestID, r.Key.TenantID, id, node); err != nil {
		return a.tell(r, err)
	}
	a.tunnels.RevokeNode(id, node) // here at once; other gateways within a poll
	return c.SendStatus(fiber.StatusNoContent)
}
