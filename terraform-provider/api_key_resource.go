package provider

import (
	"context"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

var (
	_ resource.ResourceWithConfigure   = (*apiKeyResource)(nil)
	_ resource.ResourceWithImportState = (*apiKeyResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*apiKeyResource)(nil)
)

func newAPIKeyResource() resource.Resource { return &apiKeyResource{} }

type apiKeyResource struct{ resourceBase }

type apiKeyModel struct {
	ID                    types.String      `tfsdk:"id"`
	Name                  types.String      `tfsdk:"name"`
	Description           types.String      `tfsdk:"description"`
	Role                  types.String      `tfsdk:"role"`
	Namespaces            types.Set         `tfsdk:"namespaces"`
	ExpiresAt             timetypes.RFC3339 `tfsdk:"expires_at"`
	Rotation              types.String      `tfsdk:"rotation"`
	RotationGracePeriod   durationString    `tfsdk:"rotation_grace_period"`
	Key                   types.String      `tfsdk:"key"`
	CreatedAt             types.String      `tfsdk:"created_at"`
	RotatedAt             types.String      `tfsdk:"rotated_at"`
	PreviousKeyValidUntil types.String      `tfsdk:"previous_key_valid_until"`
}

func (r *apiKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_api_key"
}

func (r *apiKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An API key of the provider key's tenant. The secret (`key`) is known only at creation: " +
			"it is stored in the Terraform state (mark outputs that use it `sensitive`), and an imported key has none.\n\n" +
			"A key may only mint keys whose role ranks at or below its own (owner and admin keys may mint keys), " +
			"for namespaces it has. Destroying the key revokes it; it stops working within seconds. " +
			"A key revoked outside Terraform is planned for re-creation.",
		Attributes: map[string]schema.Attribute{
			"id": computedKept("The key's id; also the import id."),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name (1-64 letters, digits, spaces, `.`, `_`, `:` or `-`). Changing it replaces the key.",
				Required:            true,
				Validators:          []validator.String{keyName()},
				PlanModifiers:       replace,
			},
			"description": descriptionAttribute("Free text, at most 1024 bytes. Changing it replaces the key.", replace...),
			"role": schema.StringAttribute{
				MarkdownDescription: "Role: a built-in one (`owner`, `admin`, `developer`, `producer`, `worker`, `viewer`, `billing`) " +
					"or one of the tenant's custom roles (`jobbie_role`). The provider's key must hold what the role grants. " +
					"Changing it replaces the key.",
				Required:      true,
				Validators:    []validator.String{roleName()},
				PlanModifiers: replace,
			},
			"namespaces": schema.SetAttribute{
				MarkdownDescription: "Namespaces the key may use; `[\"*\"]` for every namespace of the tenant. " +
					"Defaults to the provider key's default namespace. Changing it replaces the key.",
				ElementType: types.StringType,
				Optional:    true,
				Computed:    true,
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(stringCheck{"namespace name or *", func(s string) error {
						if s == tenancy.AllNamespaces {
							return nil
						}
						return tenancy.ValidateNamespace(s)
					}}),
				},
				PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplace(), setplanmodifier.UseStateForUnknown()},
			},
			"expires_at": schema.StringAttribute{
				MarkdownDescription: "When the key stops working (RFC 3339, in the future, at most ten years ahead; kept to the second). " +
					"Left out, the key never expires. Changing it replaces the key.",
				Optional:      true,
				CustomType:    timetypes.RFC3339Type{},
				PlanModifiers: replace,
			},
			"rotation": schema.StringAttribute{
				MarkdownDescription: "A value of your choice; changing it rotates the key in place: same id, name, role, namespaces " +
					"and expiry, a new `key`. The secret it replaces keeps working for `rotation_grace_period`. " +
					"Any string works: a date, a version number, or the id of a `time_rotating` resource.",
				Optional: true,
			},
			"rotation_grace_period": schema.StringAttribute{
				MarkdownDescription: "How long the secret a rotation replaces keeps working, from `0s` (the default: it stops at once) " +
					"to `168h`. Changing it alone rotates nothing.",
				Optional:      true,
				CustomType:    durationType{},
				Validators:    []validator.String{duration(0, maxGracePeriod)},
				PlanModifiers: []planmodifier.String{sameDuration},
			},
			"key": computedSecret("The secret to send as `Authorization: Bearer <key>`. Set at creation and on rotation " +
				"only; null after import."),
			"created_at": computedKept("When the key was created (RFC 3339)."),
			"rotated_at": computedKept("When the key was last rotated (RFC 3339); null if never."),
			"previous_key_valid_until": computedKept("Until when the secret replaced by the last rotation Terraform made " +
				"keeps working (RFC 3339); null if Terraform has not rotated the key."),
		},
	}
}

// ModifyPlan plans a new secret when rotation changes.
func (r *apiKeyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var prior, planned types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("rotation"), &prior)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("rotation"), &planned)...)
	if resp.Diagnostics.HasError() || planned.Equal(prior) {
		return
	}
	for _, attr := range []string{"key", "rotated_at", "previous_key_valid_until"} {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.StringUnknown())...)
	}
}

// set copies the API's view of the key into m (never the secret), the
// expiry in m's spelling when it is the same instant.
func (m *apiKeyModel) set(k *client.Key) {
	m.ID = types.StringValue(k.ID)
	m.Name = types.StringValue(k.Name)
	m.Role = types.StringValue(k.Role)
	nss := append([]string(nil), k.Namespaces...)
	sort.Strings(nss)
	m.Namespaces, _ = types.SetValueFrom(context.Background(), types.StringType, nss)
	expires := timetypes.NewRFC3339Null()
	if k.ExpiresAt != nil {
		expires = timetypes.NewRFC3339TimeValue(k.ExpiresAt.UTC())
	}
	m.ExpiresAt = sameInstant(m.ExpiresAt, expires)
	m.Description = types.StringValue(k.Description)
	m.CreatedAt = timeValue(&k.CreatedAt)
	m.RotatedAt = timeValue(k.RotatedAt)
	if m.PreviousKeyValidUntil.IsUnknown() {
		m.PreviousKeyValidUntil = types.StringNull()
	}
}

func (r *apiKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *apiKeyModel) {
		body := client.CreateKeyRequest{Name: plan.Name.ValueString(), Role: tenancy.Role(plan.Role.ValueString()),
			Description: plan.Description.ValueString()}
		if !plan.Namespaces.IsNull() && !plan.Namespaces.IsUnknown() {
			resp.Diagnostics.Append(plan.Namespaces.ElementsAs(ctx, &body.Namespaces, false)...)
		}
		if !plan.ExpiresAt.IsNull() {
			t, d := plan.ExpiresAt.ValueRFC3339Time()
			resp.Diagnostics.Append(d...)
			body.ExpiresAt = &t
		}
		if resp.Diagnostics.HasError() {
			return
		}
		k, err := retry(ctx, true, func() (*client.CreatedKey, error) { return r.p.client.CreateKey(ctx, body) })
		if err != nil {
			apiError(&resp.Diagnostics, "Could not create API key "+body.Name, err)
			return
		}
		plan.set(&k.Key)
		plan.Key = types.StringValue(k.Token)
	})
}

func (r *apiKeyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[apiKeyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	id := state.ID.ValueString()
	k, ok := refresh(ctx, resp, "Could not read API key "+id, func() (*client.Key, error) { return r.p.client.GetKey(ctx, id) })
	if !ok {
		return
	}
	if k.RevokedAt != nil {
		resp.State.RemoveResource(ctx) // revoked outside Terraform: planned for creation again
		return
	}
	state.set(k)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// sameInstant keeps the configured spelling of a time (its UTC offset)
// when the API's answer is the same instant.
func sameInstant(prior, got timetypes.RFC3339) timetypes.RFC3339 {
	if prior.IsNull() || prior.IsUnknown() || got.IsNull() {
		return got
	}
	a, d1 := prior.ValueRFC3339Time()
	b, d2 := got.ValueRFC3339Time()
	if !d1.HasError() && !d2.HasError() && a.Equal(b) {
		return prior
	}
	return got
}

// Update rotates the key when rotation changed; every other change
// replaces the key, but for rotation_grace_period, which only Terraform
// keeps.
func (r *apiKeyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, state *apiKeyModel) {
		if plan.Rotation.Equal(state.Rotation) {
			return
		}
		id, grace := state.ID.ValueString(), goDuration(plan.RotationGracePeriod)
		k, err := retry(ctx, true, func() (*client.RotatedKey, error) { return r.p.client.RotateKey(ctx, id, grace) })
		if err != nil {
			apiError(&resp.Diagnostics, "Could not rotate API key "+id, err)
			return
		}
		plan.set(&k.Key)
		plan.Key = types.StringValue(k.Token)
		plan.PreviousKeyValidUntil = timeValue(&k.PreviousKeyValidUntil)
	})
}

func (r *apiKeyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[apiKeyModel](ctx, req.State, &resp.Diagnostics)
	if ok {
		id := state.ID.ValueString()
		deleteCall(ctx, &resp.Diagnostics, "Could not revoke API key "+id, func() error { return r.p.client.DeleteKey(ctx, id) })
	}
}

// ImportState takes the key's id; the imported key has no secret.
func (r *apiKeyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("key"), types.StringNull())...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("previous_key_valid_until"), types.StringNull())...)
}
