package admin

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's egress allow-list is kept by its shard alone (PUT
// /api/v1/namespace, egress_allow), which checks it and holds push queues
// and webhooks to it; control does not keep it. So it has routes of its
// own, and the namespace's record (GET, PATCH) neither carries it nor
// waits on the shard for it.

// GetNamespaceEgress answers the list as the shard keeps it; a namespace
// on a self-hosted shard no node has joined has none.
func (a *Admin) GetNamespaceEgress(c *fiber.Ctx, r *admitted.Request) error {
	name, err := a.namedNamespace(c, r, tenancy.ActNamespaceRead)
	if err != nil {
		return err
	}
	p, err := a.namespace(r, name)
	if err != nil {
		return err
	}
	out := wire.NamespaceEgress{EgressAllow: []string{}}
	if !p.Unjoined {
		var held wire.NamespaceUsage
		if err := a.proxy.ShardJSON(r, name, http.MethodGet, nil, http.StatusOK, &held); err != nil {
			return err
		}
		out.EgressAllow = append(out.EgressAllow, held.EgressAllow...)
	}
	return c.JSON(out)
}

// PutNamespaceEgress replaces the list on the namespace's shard, which
// checks it (a 400 naming egress_allow[i]) and keeps the namespace's
// other settings as they are. Refused (409) on a self-hosted shard no
// node has joined: there is no shard to keep it.
func (a *Admin) PutNamespaceEgress(c *fiber.Ctx, r *admitted.Request) error {
	name, err := a.namedNamespace(c, r, tenancy.ActNamespaceManage)
	if err != nil {
		return err
	}
	var in wire.NamespaceEgressRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if in.EgressAllow == nil {
		return apierr.Field("egress_allow", "egress_allow is required: an array of host names, \"*.domain\" patterns or IP addresses (null for none)")
	}
	// Checked here as the shard checks it, so a bad entry is a 400 naming
	// it rather than the shard's refusal relayed as unavailable.
	if _, err := outbound.ParseAllowList(in.EgressAllow); err != nil {
		return err
	}
	p, err := a.namespace(r, name)
	if err != nil {
		return err
	}
	if p.Unjoined {
		return apierr.OfField(apierr.Conflict, "egress_allow",
			"no node of the self-hosted shard of namespace %q has joined yet: set its egress allow-list after a node joins", name)
	}
	var held wire.NamespaceUsage
	if err := a.proxy.ShardJSON(r, name, http.MethodPut, &wire.NamespaceSettings{EgressAllow: in.EgressAllow}, http.StatusOK, &held); err != nil {
		return err
	}
	return c.JSON(wire.NamespaceEgress{EgressAllow: append([]string{}, held.EgressAllow...)})
}
