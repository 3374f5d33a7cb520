package provider

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

var (
	_ resource.ResourceWithConfigure      = (*roleResource)(nil)
	_ resource.ResourceWithImportState    = (*roleResource)(nil)
	_ resource.ResourceWithValidateConfig = (*roleResource)(nil)
)

func newRoleResource() resource.Resource { return &roleResource{} }

type roleResource struct{ resourceBase }

type roleModel struct {
	ID          types.String     `tfsdk:"id"`
	Name        types.String     `tfsdk:"name"`
	Description types.String     `tfsdk:"description"`
	Permissions []permissionData `tfsdk:"permissions"`
	CreatedAt   types.String     `tfsdk:"created_at"`
	UpdatedAt   types.String     `tfsdk:"updated_at"`
}

// actionsDoc lists the action vocabulary for the schema's descriptions.
const actionsDoc = "`job.enqueue`, `job.work` (fetch, ack, fail, heartbeat), `job.read`, `job.manage` (retry, cancel, move, " +
	"delete, bulk), `queue.read` (also workers), `queue.manage`, `schedule.read`, `schedule.manage`, `namespace.read`, " +
	"`namespace.manage`, `key.read` (keys and roles), `key.manage` (keys and roles), `usage.read`, `backup.read`, `backup.manage`, `webhook.read` (signing keys, webhook endpoints and their deliveries), `webhook.manage` (rotating signing keys; webhook endpoints, their secrets, tests and redeliveries)"

func (r *roleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_role"
}

func (r *roleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	patterns := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{
			MarkdownDescription: desc,
			ElementType:         types.StringType,
			Required:            true,
			Validators:          []validator.List{listvalidator.SizeBetween(1, tenancy.MaxPatternsPerList)},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A custom role of the provider key's tenant: a set of permissions that API keys may carry " +
			"(`jobbie_api_key`'s `role`). A key of the role may do what any of its permissions grants, within the key's own " +
			"namespaces. Every pattern is `*`, a name, or a prefix ending in `*` (`emails.*` matches `emails.send`, not `emails`).\n\n" +
			"A permission whose `queues` are not `[\"*\"]` acts on those queues only: keys of the role are refused on any other " +
			"queue and do not see its jobs. What is about a namespace as a whole (its settings, keys, roles) needs `queues = [\"*\"]`. " +
			"A key never grants more than it holds: the provider's key must hold every permission the role grants.\n\n" +
			"Changes apply to the role's keys at once. Destroying a role that live keys carry fails (`role_in_use`): revoke " +
			"or re-role them first (Terraform does so first for keys that reference the role).",
		Attributes: map[string]schema.Attribute{
			"id": computedKept("The role's name; also the import id."),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name: 1-63 lowercase letters, digits or `-`, not a built-in role's. Changing it replaces the role.",
				Required:            true,
				Validators: []validator.String{stringCheck{"role name", func(s string) error {
					var fe *tenancy.FieldError
					err := tenancy.ValidateRoleName(s)
					if errors.As(err, &fe) {
						return errors.New(fe.Msg)
					}
					return err
				}}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"description": descriptionAttribute("Free text, at most 1024 bytes."),
			"permissions": schema.ListNestedAttribute{
				MarkdownDescription: "What the role grants (1 to 64 permissions): each allows its actions on the queues matching " +
					"`queues` in the namespaces matching `namespaces`.",
				Required:   true,
				Validators: []validator.List{listvalidator.SizeBetween(1, tenancy.MaxPermissions)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"actions":    patterns("Actions or patterns of them (`*`, `job.*`): " + actionsDoc + "."),
					"namespaces": patterns("Namespaces (`*`: all the key has) or prefixes (`team-*`)."),
					"queues":     patterns("Queues (`*`: all) or prefixes (`emails.*`)."),
				}},
			},
			"created_at": computedKept("When the role was created (RFC 3339)."),
			"updated_at": computedTime("When the role was last changed (RFC 3339)."),
		},
	}
}

// fieldPath turns the API's and tenancy's field names
// ("permissions[2].queues[0]") into attribute paths.
var fieldPart = regexp.MustCompile(`([a-z_]+)(?:\[(\d+)\])?`)

func fieldPath(field string) path.Path {
	p := path.Empty()
	for _, m := range fieldPart.FindAllStringSubmatch(field, -1) {
		p = p.AtName(m[1])
		if m[2] != "" {
			i, _ := strconv.Atoi(m[2])
			p = p.AtListIndex(i)
		}
	}
	return p
}

// ValidateConfig checks the permissions as the API will, when they are
// known at plan time.
func (r *roleResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var perms types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("permissions"), &perms)...)
	if resp.Diagnostics.HasError() || perms.IsNull() || perms.IsUnknown() {
		return
	}
	var ps []permissionData
	if d := perms.ElementsAs(ctx, &ps, false); d.HasError() {
		return // unknown values inside: checked at apply by the API
	}
	var fe *tenancy.FieldError
	tps := make([]tenancy.Permission, len(ps))
	for i, p := range ps {
		tps[i] = tenancy.Permission{Actions: p.Actions, Namespaces: p.Namespaces, Queues: p.Queues}
	}
	if err := tenancy.ValidatePermissions(tps); errors.As(err, &fe) {
		resp.Diagnostics.AddAttributeError(fieldPath(fe.Field), "Invalid permission", fe.Field+": "+fe.Msg)
	}
}

func toPermissions(ps []permissionData) []client.Permission {
	out := make([]client.Permission, len(ps))
	for i, p := range ps {
		out[i] = client.Permission{Actions: p.Actions, Namespaces: p.Namespaces, Queues: p.Queues}
	}
	return out
}

func fromPermissions(ps []client.Permission) []permissionData {
	out := make([]permissionData, len(ps))
	for i, p := range ps {
		out[i] = permissionData{Actions: p.Actions, Namespaces: p.Namespaces, Queues: p.Queues}
	}
	return out
}

func (m *roleModel) set(role *client.Role) {
	m.ID = types.StringValue(role.Name)
	m.Name = types.StringValue(role.Name)
	m.Description = types.StringValue(role.Description)
	m.Permissions = fromPermissions(role.Permissions)
	m.CreatedAt = timeValue(role.CreatedAt)
	m.UpdatedAt = timeValue(role.UpdatedAt)
}

func (m *roleModel) role() client.Role {
	return client.Role{Name: m.Name.ValueString(), Description: m.Description.ValueString(), Permissions: toPermissions(m.Permissions)}
}

func (r *roleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *roleModel) {
		body := plan.role()
		role, err := retry(ctx, true, func() (*client.Role, error) { return r.p.client.CreateRole(ctx, body) })
		if err != nil {
			if !alreadyExists(&resp.Diagnostics, err, "Role", body.Name) {
				apiError(&resp.Diagnostics, "Could not create role "+body.Name, err)
			}
			return
		}
		plan.set(role)
	})
}

func (r *roleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[roleModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	role, ok := refresh(ctx, resp, "Could not read role "+name, func() (*client.Role, error) { return r.p.client.GetRole(ctx, name) })
	if !ok {
		return
	}
	if role.Builtin {
		resp.Diagnostics.AddError("Built-in role", "Role "+name+" is built in and read-only; read it with the jobbie_role data source.")
		return
	}
	state.set(role)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *roleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, _ *roleModel) {
		body := plan.role()
		role, err := retry(ctx, true, func() (*client.Role, error) { return r.p.client.UpdateRole(ctx, body) })
		if err != nil {
			apiError(&resp.Diagnostics, "Could not update role "+body.Name, err)
			return
		}
		plan.set(role)
	})
}

func (r *roleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[roleModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	err := retryErr(ctx, true, func() error { return r.p.client.DeleteRole(ctx, name) })
	switch {
	case err == nil, client.IsNotFound(err):
	case client.ErrorCode(err) == client.CodeRoleInUse:
		resp.Diagnostics.AddError("Role "+name+" is in use",
			apiDetail(err)+"\n\nRevoke the keys that carry it, or give them another role, then destroy it.")
	default:
		apiError(&resp.Diagnostics, "Could not delete role "+name, err)
	}
}

// ImportState takes the role's name.
func (r *roleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
