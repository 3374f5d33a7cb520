package admin

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's self-hosted shards, through control. Minting a join token
// and revoking a shard are the tenant owner's alone (a key of role
// owner): a token makes machines outside the hosted service members of
// the tenant's data plane. Listing needs namespace.read. Control keeps
// every tenant's shards apart; a shard of another tenant is a 404.

func ownerOnly(r *admitted.Request, what string) error {
	if r.Key.Role != tenancy.RoleOwner {
		return apierr.New(apierr.Forbidden, "API key %s has role %q: only an owner key may %s", r.Key.Subject, r.Key.Role, what)
	}
	return nil
}

// ListShards lists the tenant's shards, each with the nodes that hold a
// tunnel to this gateway now (another gateway may hold the others') and
// the health one of them tells.
func (a *Admin) ListShards(c *fiber.Ctx, r *admitted.Request) error {
	out, err := a.control.OwnedShards(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
	}
	a.tunnels.Annotate(r.RequestID, out.Shards)
	return c.JSON(out)
}

func (a *Admin) CreateJoinToken(c *fiber.Ctx, r *admitted.Request) error {
	if err := ownerOnly(r, "mint shard join tokens"); err != nil {
		return err
	}
	var in wire.CreateJoinTokenRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	out, err := a.control.CreateJoinToken(a.ctx, r.RequestID, r.Key.TenantID, in)
	if err != nil {
		return a.tell(r, err)
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (a *Admin) RevokeShard(c *fiber.Ctx, r *admitted.Request) error {
	if err := ownerOnly(r, "revoke shards"); err != nil {
		return err
	}
	id := strings.Clone(c.Params("id")) // params alias request memory
	if err := a.control.RevokeShard(a.ctx, r.RequestID, r.Key.TenantID, id); err != nil {
		return a.tell(r, err)
	}
	a.tunnels.Revoke(id) // here at once; other gateways within a poll
	return c.SendStatus(fiber.StatusNoContent)
}
