package admin

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Namespaces as objects. Control holds their records and settings; a
// namespace's jobs, queues and schedules live on its shard, which the
// gateway asks before it deletes one, and empties first. The shard also
// holds the settings it applies (PUT /api/v1/namespace): the namespace's
// retention, which the gateway sends there on a create that sets it and
// on every update that sends it, so that a failure can be retried, and
// its egress allow-list, which only the shard keeps (nsegress.go).

// listNamespaces answers the namespaces the caller may read. Control's
// records carry their shard_id; decoding them as wire.Namespace leaves it
// out, as tenants never see hosted shards: control names the shard only
// for a namespace on the tenant's own self-hosted shard (wire.Namespace's
// Shard), in the list as in get, create and update.
func (a *Admin) ListNamespaces(c *fiber.Ctx, r *admitted.Request) error {
	list, err := a.control.ListNamespaces(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
	}
	out := wire.NamespaceList{Namespaces: make([]wire.Namespace, 0, len(list.Namespaces))}
	for _, ns := range list.Namespaces {
		if !r.Key.AllowsNamespace(ns.Name) {
			continue
		}
		ok, err := a.gate.AllowedIn(r, ns.Name, tenancy.ActNamespaceRead)
		if err != nil {
			return err
		}
		if ok {
			out.Namespaces = append(out.Namespaces, ns)
		}
	}
	return c.JSON(out)
}

func (a *Admin) CreateNamespace(c *fiber.Ctx, r *admitted.Request) error {
	var in controlapi.NewNamespace // Shard: the tenant's own self-hosted shard
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := tenancy.ValidateNamespace(in.Name); err != nil {
		return apierr.Field("name", "%v", err)
	}
	if !r.Key.AllowsNamespace(in.Name) {
		return apierr.New(apierr.Forbidden, "API key %s may not use namespace %q, so it may not create it", r.Key.Subject, in.Name)
	}
	if err := a.gate.AuthorizeIn(r, in.Name, tenancy.ActNamespaceManage); err != nil {
		return err
	}
	if err := checkRetention(in.Retention); err != nil {
		return err
	}
	ctx, idem := a.keyed(r)
	made, err := a.control.CreateNamespace(ctx, r.RequestID, r.Key.TenantID, in) // without its shard, as in the list
	if err != nil {
		return a.tell(r, err)
	}
	// Drop a cached "no such namespace" so the new one is usable at once.
	a.proxy.Invalidate(r.Key.TenantID, in.Name)
	if made.Retention == "" {
		return created(c, idem, fiber.StatusCreated, made)
	}
	if idem != nil && idem.Replayed {
		if err := a.retentionAgain(r, in.Name); err != nil {
			return err
		}
		return created(c, idem, fiber.StatusCreated, made)
	}
	// The shard is known once control placed the namespace. When it
	// cannot take the retention, control forgets it too: the namespace
	// stays, without a retention anywhere, and a PATCH sets it again.
	if err := a.proxy.ShardJSON(r, in.Name, http.MethodPut, retentionSettings(made.Retention), http.StatusOK, nil); err != nil {
		undo := wire.UpdateNamespaceRequest{Retention: json.RawMessage("null")}
		if _, uerr := a.control.UpdateNamespace(a.ctx, r.RequestID, r.Key.TenantID, in.Name, undo); uerr != nil {
			a.log.Error("gateway: could not take back the retention of a namespace its shard could not apply",
				"tenant", r.Key.TenantID, "namespace", in.Name, "request_id", r.RequestID, "err", uerr)
		}
		return apierr.Retry(apierr.Unavailable, 1,
			"namespace %q was created, but its shard could not apply its retention, so it has none: set it with PATCH shortly", in.Name)
	}
	return created(c, idem, fiber.StatusCreated, made)
}

// retentionAgain gives namespace name's shard the retention control has
// now, on a replay of its create: the first request may have ended
// between control's create and the shard's (a retention the shard refused
// then is none in control too). The answer stays the first one's.
func (a *Admin) retentionAgain(r *admitted.Request, name string) error {
	ns, err := a.namespace(r, name)
	if err != nil || ns.Unjoined {
		return err
	}
	if err := a.proxy.ShardJSON(r, name, http.MethodPut, retentionSettings(ns.Retention), http.StatusOK, nil); err != nil {
		return apierr.Retry(apierr.Unavailable, 1,
			"namespace %q exists, but its shard could not be given its retention: send the request again shortly", name)
	}
	return nil
}

// checkRetention refuses a retention control would refuse, before the
// shard is asked to apply it: a duration between wire.MinRetention and
// wire.MaxRetention, or null (absent) for none.
func checkRetention(raw json.RawMessage) error {
	d, ok, err := wire.ParseDuration(raw)
	switch {
	case err != nil:
		return apierr.Field("retention", "retention must be a duration like \"168h\" or a number of seconds (null for none)")
	case ok && (d < wire.MinRetention || d > wire.MaxRetention):
		return apierr.Field("retention", "retention must be between %s and %s (null for none)",
			wire.FormatDuration(wire.MinRetention), wire.FormatDuration(wire.MaxRetention))
	}
	return nil
}

// retentionSettings is the shard's PUT /api/v1/namespace body for a
// retention as control writes it ("" for none).
func retentionSettings(retention string) *wire.NamespaceSettings {
	raw := json.RawMessage("null")
	if retention != "" {
		raw, _ = json.Marshal(retention) // a plain string: cannot fail
	}
	return &wire.NamespaceSettings{Retention: raw}
}

// namedNamespace is the namespace a /namespaces/{name} request is about,
// once the caller may act on it: a namespace beyond the key's is not
// found, as in the list; RBAC decides act on it.
func (a *Admin) namedNamespace(c *fiber.Ctx, r *admitted.Request, act tenancy.Action) (string, error) {
	name := c.Params("name")
	if err := tenancy.ValidateNamespace(name); err != nil {
		return "", apierr.Field("name", "%v", err)
	}
	if !r.Key.AllowsNamespace(name) {
		return "", namespaceNotFound(name)
	}
	name = strings.Clone(name) // params alias request memory
	return name, a.gate.AuthorizeIn(r, name, act)
}

func namespaceNotFound(ns string) error {
	return apierr.New(apierr.NotFound, "namespace %q not found", ns)
}

// namespace is control's record of namespace name, shard included.
func (a *Admin) namespace(r *admitted.Request, name string) (wire.NamespacePlacement, error) {
	ns, err := a.control.Namespace(a.ctx, r.RequestID, r.Key.TenantID, name)
	return ns, a.tell(r, err)
}

func (a *Admin) GetNamespace(c *fiber.Ctx, r *admitted.Request) error {
	name, err := a.namedNamespace(c, r, tenancy.ActNamespaceRead)
	if err != nil {
		return err
	}
	ns, err := a.namespace(r, name)
	if err != nil {
		return err
	}
	return c.JSON(ns.Namespace)
}

// updateNamespace passes the fields sent to control as they came (so
// absent and null stay apart); control checks them. A retention sent (a
// duration, or null for none) goes to the namespace's shard first: when
// the shard cannot take it, the answer is 503 and control is not changed;
// when control then refuses the update, the shard gets the retention
// control kept back. Either way the same request can be sent again. On a
// self-hosted shard no node has joined (control's unjoined) a retention
// is refused (409 on retention) before anything changes.
func (a *Admin) UpdateNamespace(c *fiber.Ctx, r *admitted.Request) error {
	name, err := a.namedNamespace(c, r, tenancy.ActNamespaceManage)
	if err != nil {
		return err
	}
	var in wire.UpdateNamespaceRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	var before wire.NamespacePlacement
	onShard := false // the retention went to the shard
	if in.Retention != nil {
		if err := checkRetention(in.Retention); err != nil {
			return err
		}
		if before, err = a.namespace(r, name); err != nil {
			return err
		}
		// On a self-hosted shard no node has joined there is no shard to
		// apply a retention, nor one to clear (create refuses one there).
		if before.Unjoined && string(in.Retention) != "null" {
			return apierr.OfField(apierr.Conflict, "retention",
				"no node of the self-hosted shard of namespace %q has joined yet: set its retention after a node joins", name)
		}
		if !before.Unjoined {
			if err := a.proxy.ShardJSON(r, name, http.MethodPut, &wire.NamespaceSettings{Retention: in.Retention}, http.StatusOK, nil); err != nil {
				return err
			}
			onShard = true
		}
	}
	ns, err := a.control.UpdateNamespace(a.ctx, r.RequestID, r.Key.TenantID, name, in)
	if err != nil {
		err = a.tell(r, err)
		if onShard {
			if undo := a.proxy.ShardJSON(r, name, http.MethodPut, retentionSettings(before.Retention), http.StatusOK, nil); undo != nil {
				a.log.Error("gateway: could not restore a namespace's retention on its shard after control refused the update",
					"tenant", r.Key.TenantID, "namespace", name, "request_id", r.RequestID, "err", undo)
			}
		}
		return err
	}
	return c.JSON(ns)
}

// deleteNamespace deletes a namespace and everything it holds: refused
// while its deletion protection is on (409 deletion_protected), and, when
// its shard says it holds jobs, queues or schedules, unless ?force=true
// (409 namespace_not_empty). The shard empties it (DELETE
// /api/v1/namespace) before control forgets it, so nothing is left behind
// under a name that may be created again; a namespace on a self-hosted
// shard no node has joined (control's unjoined) holds nothing, and is
// deleted in control alone.
func (a *Admin) DeleteNamespace(c *fiber.Ctx, r *admitted.Request) error {
	name, err := a.namedNamespace(c, r, tenancy.ActNamespaceManage)
	if err != nil {
		return err
	}
	force, err := forceParam(c)
	if err != nil {
		return err
	}
	ns, err := a.namespace(r, name)
	if err != nil {
		return err
	}
	if ns.DeletionProtection {
		return apierr.New(apierr.DeletionProtected, "namespace %q has deletion protection on: set deletion_protection to false first", name)
	}
	// Control refuses the delete of a namespace being moved, but only after
	// the shard was emptied: refuse first, from control's fresh answer.
	if ns.Moving {
		return apierr.Retry(apierr.Conflict, 5, "namespace %q is being moved to another shard: delete it once the move ends", name)
	}
	// On a self-hosted shard no node has joined, nothing can be: there is
	// no shard to ask or empty, only control's record.
	if !ns.Unjoined {
		if err := a.emptyOnShard(r, name, force); err != nil {
			return err
		}
	}
	if err := a.control.DeleteNamespace(a.ctx, r.RequestID, r.Key.TenantID, name); err != nil {
		return a.tell(r, err)
	}
	a.proxy.Invalidate(r.Key.TenantID, name)
	a.schedules.Forget(r.Key.TenantID) // its schedules went with it
	return c.SendStatus(fiber.StatusNoContent)
}

// emptyOnShard empties namespace name on its shard: refused (409
// namespace_not_empty) when the shard says it holds jobs, queues or
// schedules, unless force.
func (a *Admin) emptyOnShard(r *admitted.Request, name string, force bool) error {
	var held wire.NamespaceUsage
	if err := a.proxy.ShardJSON(r, name, http.MethodGet, nil, http.StatusOK, &held); err != nil {
		return err
	}
	if !force && (held.Jobs > 0 || held.Queues > 0 || held.Schedules > 0) {
		return apierr.New(apierr.NamespaceNotEmpty,
			"namespace %q holds %d jobs, %d queues and %d schedules: delete with ?force=true to delete them with it",
			name, held.Jobs, held.Queues, held.Schedules)
	}
	// Emptied even when it looked empty: what raced in meanwhile, and what
	// the counts leave out, goes too.
	return a.proxy.ShardJSON(r, name, http.MethodDelete, nil, http.StatusNoContent, nil)
}

// forceParam reads ?force: absent is false.
func forceParam(c *fiber.Ctx) (bool, error) {
	v := c.Query("force")
	if v == "" {
		return false, nil
	}
	force, err := strconv.ParseBool(v)
	if err != nil {
		return false, apierr.Field("force", "force must be true or false, not %q", v)
	}
	return force, nil
}
