package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The tenant's console sign-in through its identity provider: one per
// tenant, so the resource's id is fixed. The API never answers the
// client secret, so the state keeps the configuration's: a secret
// changed outside Terraform is not seen, and an imported resource has
// none until the configuration's is applied.

var (
	_ resource.ResourceWithConfigure   = (*ssoResource)(nil)
	_ resource.ResourceWithImportState = (*ssoResource)(nil)
)

// ssoID is the resource's id and its import id.
const ssoID = "sso"

func newSSOResource() resource.Resource { return &ssoResource{} }

type ssoResource struct{ resourceBase }

type ssoModel struct {
	ID              types.String        `tfsdk:"id"`
	IssuerURL       types.String        `tfsdk:"issuer_url"`
	ClientID        types.String        `tfsdk:"client_id"`
	ClientSecret    types.String        `tfsdk:"client_secret"`
	ClientSecretSet types.Bool          `tfsdk:"client_secret_set"`
	AllowedDomains  []string            `tfsdk:"allowed_domains"`
	AllowedGroups   []string            `tfsdk:"allowed_groups"`
	GroupsClaim     types.String        `tfsdk:"groups_claim"`
	GroupRoles      []ssoGroupRoleModel `tfsdk:"group_roles"`
	DefaultRole     types.String        `tfsdk:"default_role"`
	RedirectPath    types.String        `tfsdk:"redirect_path"`
	UpdatedAt       types.String        `tfsdk:"updated_at"`
}

type ssoGroupRoleModel struct {
	Group types.String `tfsdk:"group"`
	Role  types.String `tfsdk:"role"`
}

func (r *ssoResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sso"
}

func (r *ssoResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	list := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: desc, ElementType: types.StringType, Optional: true,
			Validators: []validator.List{listvalidator.SizeAtMost(wire.MaxSSOListItems)}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The tenant's console sign-in through its OpenID Connect identity provider: who may sign in " +
			"(a verified email at `allowed_domains`, or a member of `allowed_groups`) and with which role. One per tenant, " +
			"and the owner's alone: the provider's key must be an owner key. Register `<gateway>` + `redirect_path` as " +
			"the client's redirect URI at the provider.\n\n`PUT /api/v1/sso` sets the whole configuration, so every " +
			"attribute changes in place. Destroying the resource ends sign-in through the provider, and the sessions it let in.\n\n" +
			"`client_secret` is write-only at the API: no answer carries it, so Terraform keeps the configuration's in its " +
			"state (sensitive) and cannot see a change made outside it.",
		Attributes: map[string]schema.Attribute{
			"id": computedKept("Always `sso`; also the import id."),
			"issuer_url": schema.StringAttribute{
				MarkdownDescription: "The provider's issuer: an absolute `https` URL without query or fragment; its discovery " +
					"document is `issuer_url/.well-known/openid-configuration`.",
				Required:   true,
				Validators: []validator.String{stringvalidator.LengthBetween(1, wire.MaxSSOURL)},
			},
			"client_id": schema.StringAttribute{
				MarkdownDescription: "The console's client at the provider (1 to 256 bytes).",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthBetween(1, wire.MaxSSOClientID)},
			},
			"client_secret": schema.StringAttribute{
				MarkdownDescription: "The client's secret (at most 1,024 bytes): required when the tenant has none yet; left " +
					"out, the one set before is kept. Never read back from the API.",
				Optional:   true,
				Sensitive:  true,
				Validators: []validator.String{stringvalidator.LengthBetween(1, wire.MaxSSOSecret)},
			},
			"client_secret_set": schema.BoolAttribute{
				MarkdownDescription: "Whether the tenant's configuration holds a client secret.",
				Computed:            true,
			},
			"allowed_domains": list("A person whose email the provider verified is at one of these domains may sign in " +
				"(lowercase domain names; a sub-domain is another domain). At least one of `allowed_domains` and " +
				"`allowed_groups` is required."),
			"allowed_groups": list("A person in one of these groups may sign in (1 to 256 bytes each)."),
			"groups_claim": schema.StringAttribute{
				MarkdownDescription: "The claim listing a person's groups, in the ID token or the provider's userinfo answer.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(wire.DefaultGroupsClaim),
				Validators:          []validator.String{stringvalidator.LengthBetween(1, wire.MaxSSOClaimBytes)},
			},
			"group_roles": schema.ListNestedAttribute{
				MarkdownDescription: "In order: the first entry whose group the person is in gives the session's role, a " +
					"built-in role or one of the tenant's custom roles. One of `group_roles` and `default_role` is required.",
				Optional:   true,
				Validators: []validator.List{listvalidator.SizeAtMost(wire.MaxSSOListItems)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"group": schema.StringAttribute{MarkdownDescription: "A group at the provider.", Required: true},
					"role":  schema.StringAttribute{MarkdownDescription: "The role its members get.", Required: true},
				}},
			},
			"default_role": schema.StringAttribute{
				MarkdownDescription: "The role of an admitted person in no mapped group; left out, such a person is refused.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"redirect_path": computedKept("The console's callback path, under the gateway's address: the redirect URI to register."),
			"updated_at":    computedTime("When the configuration was last set (RFC 3339)."),
		},
	}
}

// put sets the configuration the plan names and reads the answer into it.
func (r *ssoResource) put(ctx context.Context, plan *ssoModel, diags *diag.Diagnostics, what string) {
	req := client.SSORequest{IssuerURL: plan.IssuerURL.ValueString(), ClientID: plan.ClientID.ValueString(),
		ClientSecret: plan.ClientSecret.ValueString(), AllowedDomains: plan.AllowedDomains, AllowedGroups: plan.AllowedGroups,
		GroupsClaim: plan.GroupsClaim.ValueString(), DefaultRole: plan.DefaultRole.ValueString()}
	for _, gr := range plan.GroupRoles {
		req.GroupRoles = append(req.GroupRoles, client.SSOGroupRole{Group: gr.Group.ValueString(), Role: gr.Role.ValueString()})
	}
	held, err := retry(ctx, true, func() (*client.SSOConfig, error) { return r.p.client.PutSSO(ctx, req) })
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" the tenant's SSO configuration", err,
			"issuer_url", "client_id", "client_secret", "allowed_domains", "allowed_groups", "groups_claim", "group_roles", "default_role")
		return
	}
	plan.fromAPI(held)
}

// fromAPI takes what the API holds, keeping the secret and, where the
// API answers an empty list or role, the model's own null or empty.
func (m *ssoModel) fromAPI(s *client.SSOConfig) {
	m.ID = types.StringValue(ssoID)
	m.IssuerURL, m.ClientID = types.StringValue(s.IssuerURL), types.StringValue(s.ClientID)
	m.ClientSecretSet = types.BoolValue(s.ClientSecretSet)
	m.AllowedDomains, m.AllowedGroups = listOf(m.AllowedDomains, s.AllowedDomains), listOf(m.AllowedGroups, s.AllowedGroups)
	m.GroupsClaim = types.StringValue(s.GroupsClaim)
	if len(s.GroupRoles) == 0 {
		m.GroupRoles = listOf(m.GroupRoles, nil)
	} else {
		m.GroupRoles = make([]ssoGroupRoleModel, len(s.GroupRoles))
		for i, gr := range s.GroupRoles {
			m.GroupRoles[i] = ssoGroupRoleModel{Group: types.StringValue(gr.Group), Role: types.StringValue(gr.Role)}
		}
	}
	if s.DefaultRole != "" || !m.DefaultRole.IsNull() {
		m.DefaultRole = types.StringValue(s.DefaultRole)
	}
	m.RedirectPath = types.StringValue(s.RedirectPath)
	m.UpdatedAt = types.StringValue(s.UpdatedAt.UTC().Format(time.RFC3339))
}

// listOf is held, or had's null or empty when held is empty (the API
// answers none as []).
func listOf[T any](had, held []T) []T {
	if len(held) == 0 {
		if had == nil {
			return nil
		}
		return []T{}
	}
	return held
}

func (r *ssoResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *ssoModel) { r.put(ctx, plan, &resp.Diagnostics, "set") })
}

// Read takes the configuration as the API holds it (the secret from the
// state); none (deleted outside Terraform) removes the resource.
func (r *ssoResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[ssoModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	held, ok := refresh(ctx, resp, "Could not read the tenant's SSO configuration",
		func() (*client.SSOConfig, error) { return r.p.client.GetSSO(ctx) })
	if ok {
		state.fromAPI(held)
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (r *ssoResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, _ *ssoModel) { r.put(ctx, plan, &resp.Diagnostics, "update") })
}

// Delete ends sign-in through the provider.
func (r *ssoResource) Delete(ctx context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteCall(ctx, &resp.Diagnostics, "Could not delete the tenant's SSO configuration", func() error { return r.p.client.DeleteSSO(ctx) })
}

// ImportState takes "sso": the tenant's configuration, without its
// secret, which the next apply of a configuration that has one sets.
func (r *ssoResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID != ssoID {
		resp.Diagnostics.AddError("Invalid import id", "Expected the import id "+ssoID+" (a tenant has one SSO configuration), got "+req.ID+".")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), ssoID)...)
}
