package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var (
	_ datasource.DataSourceWithConfigure = (*namespaceDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*roleDataSource)(nil)
)

func newNamespaceDataSource() datasource.DataSource { return &namespaceDataSource{} }

type namespaceDataSource struct{ dataSourceBase }

type namespaceDataModel struct {
	Name               types.String   `tfsdk:"name"`
	Description        types.String   `tfsdk:"description"`
	Retention          durationString `tfsdk:"retention"`
	DeletionProtection types.Bool     `tfsdk:"deletion_protection"`
	CreatedAt          types.String   `tfsdk:"created_at"`
}

func (d *namespaceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespace"
}

func (d *namespaceDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one of the tenant's namespaces that the provider's API key may use.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "Namespace name.",
				Required:            true,
				Validators:          []validator.String{namespaceName()},
			},
			"description": schema.StringAttribute{MarkdownDescription: "Description.", Computed: true},
			"retention": schema.StringAttribute{
				MarkdownDescription: "Default retention for finished jobs; null for none.",
				Computed:            true,
				CustomType:          durationType{},
			},
			"deletion_protection": schema.BoolAttribute{MarkdownDescription: "Whether deletion is refused.", Computed: true},
			"created_at":          schema.StringAttribute{MarkdownDescription: "When it was created (RFC 3339).", Computed: true},
		},
	}
}

func (d *namespaceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[namespaceDataModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	name := m.Name.ValueString()
	ns, ok := readCall(ctx, &resp.Diagnostics, "Could not read namespace "+name, func() {
		resp.Diagnostics.AddError("Namespace not found", "Namespace "+name+" does not exist, or the provider's API key may not use it.")
	}, func() (*client.Namespace, error) { return d.p.client.GetNamespace(ctx, name) })
	if !ok {
		return
	}
	m.Description = types.StringValue(ns.Description)
	m.Retention = durationValue(ns.Retention)
	m.DeletionProtection = types.BoolValue(ns.DeletionProtection)
	m.CreatedAt = timeValue(&ns.CreatedAt)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func newRoleDataSource() datasource.DataSource { return &roleDataSource{} }

type roleDataSource struct{ dataSourceBase }

type roleDataModel struct {
	Name        types.String     `tfsdk:"name"`
	Description types.String     `tfsdk:"description"`
	Builtin     types.Bool       `tfsdk:"builtin"`
	Permissions []permissionData `tfsdk:"permissions"`
}

type permissionData struct {
	Actions    []string `tfsdk:"actions"`
	Namespaces []string `tfsdk:"namespaces"`
	Queues     []string `tfsdk:"queues"`
}

func (d *roleDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_role"
}

func (d *roleDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	list := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: desc, ElementType: types.StringType, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a role and what it grants: a built-in one (`owner`, `admin`, `developer`, `producer`, " +
			"`worker`, `viewer`, `billing`; read-only) or one of the tenant's custom roles (`jobbie_role`). The provider's " +
			"key needs `key.read`.\n\nActions are " + actionsDoc + "; `*` and `job.*` are patterns.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "Role name.",
				Required:            true,
				Validators:          []validator.String{roleName()},
			},
			"description": schema.StringAttribute{MarkdownDescription: "Description.", Computed: true},
			"builtin":     schema.BoolAttribute{MarkdownDescription: "Whether the role is built in (read-only).", Computed: true},
			"permissions": schema.ListNestedAttribute{
				MarkdownDescription: "What the role may do: each permission allows its actions on its namespaces' queues.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"actions":    list("Actions, or patterns of actions (`*`, `job.*`)."),
					"namespaces": list("Namespaces (`*`: every namespace the API key has)."),
					"queues":     list("Queues (`*`: every queue)."),
				}},
			},
		},
	}
}

func (d *roleDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[roleDataModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	name := m.Name.ValueString()
	role, ok := readCall(ctx, &resp.Diagnostics, "Could not read role "+name, func() {
		resp.Diagnostics.AddError("Role not found", "The tenant has no role named "+name+".")
	}, func() (*client.Role, error) { return d.p.client.GetRole(ctx, name) })
	if !ok {
		return
	}
	m.Description = types.StringValue(role.Description)
	m.Builtin = types.BoolValue(role.Builtin)
	m.Permissions = fromPermissions(role.Permissions)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}
