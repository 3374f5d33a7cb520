package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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

// A namespace's egress allow-list is a resource of its own, not an
// attribute of jobbie_namespace: the namespace's shard keeps it, not the
// namespace's record the namespace resource reads, and a namespace on a
// self-hosted shard no node has joined yet cannot hold one.

var (
	_ resource.ResourceWithConfigure   = (*namespaceEgressResource)(nil)
	_ resource.ResourceWithImportState = (*namespaceEgressResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*namespaceEgressResource)(nil)
)

// maxEgressAllow is the API's limit on a list's entries
// (outbound.MaxAllowList, which the provider may not import).
const maxEgressAllow = 64

func newNamespaceEgressResource() resource.Resource { return &namespaceEgressResource{} }

type namespaceEgressResource struct{ p *providerData }

type namespaceEgressModel struct {
	ID          types.String `tfsdk:"id"`
	Namespace   types.String `tfsdk:"namespace"`
	EgressAllow types.Set    `tfsdk:"egress_allow"`
}

func (r *namespaceEgressResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespace_egress"
}

func (r *namespaceEgressResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A namespace's egress allow-list: the hosts its push queues and webhooks may call. With none, " +
			"any public host may be called (the API's address rules hold either way: the list only narrows them).\n\n" +
			"`PUT /api/v1/namespaces/{name}/egress` sets the whole list, so `egress_allow` changes in place; a list the " +
			"namespace already has is taken over. Destroying the resource removes the list (any public host again). A " +
			"namespace on a self-hosted shard no node has joined yet cannot hold a list (the API answers 409).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The namespace's name; also the import id.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"namespace": namespaceAttribute("egress allow-list"),
			"egress_allow": schema.SetAttribute{
				MarkdownDescription: "At most 64 entries, each a host name (`hooks.example.com`, matched exactly, case and a " +
					"trailing dot aside), a `*.domain` pattern (any subdomain of `domain` at any depth, not `domain` itself) or an " +
					"IP address. An empty set is no list: any public host. Push queues and webhooks whose URL's host is off the " +
					"list are refused when configured, and their deliveries fail once the list changes.",
				Required:    true,
				ElementType: types.StringType,
				Validators:  []validator.Set{setvalidator.SizeAtMost(maxEgressAllow)},
			},
		},
	}
}

func (r *namespaceEgressResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.p = configure(req.ProviderData, &resp.Diagnostics)
}

func (r *namespaceEgressResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planDefaultNamespace(ctx, r.p, req, resp)
}

func (m *namespaceEgressModel) set(allow []string, ns string, diags *diag.Diagnostics) {
	m.ID = types.StringValue(ns)
	m.Namespace = types.StringValue(ns)
	v, d := types.SetValueFrom(context.Background(), types.StringType, allow)
	diags.Append(d...)
	m.EgressAllow = v
}

// put sets the list the plan describes and reads the answer into plan.
func (r *namespaceEgressResource) put(ctx context.Context, plan *namespaceEgressModel, diags *diag.Diagnostics, what string) {
	ns := plan.Namespace.ValueString()
	allow := []string{}
	if diags.Append(plan.EgressAllow.ElementsAs(ctx, &allow, false)...); diags.HasError() {
		return
	}
	held, err := retry(ctx, true, func() ([]string, error) { return r.p.in(ns).PutNamespaceEgress(ctx, ns, allow) })
	if err != nil {
		summary := "Could not " + what + " the egress allow-list of namespace " + ns
		// The API names an entry by its place in what was sent
		// (egress_allow[1]); its message quotes the entry, which is what
		// a set's reader can find.
		if e, ok := client.AsError(err); ok && strings.HasPrefix(e.Field, "egress_allow") {
			diags.AddAttributeError(path.Root("egress_allow"), summary, apiDetail(err))
			return
		}
		apiError(diags, summary, err)
		return
	}
	plan.set(held, ns, diags)
}

func (r *namespaceEgressResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan namespaceEgressModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &plan, &resp.Diagnostics, "set"); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *namespaceEgressResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state namespaceEgressModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns := state.Namespace.ValueString()
	allow, err := retry(ctx, false, func() ([]string, error) { return r.p.in(ns).GetNamespaceEgress(ctx, ns) })
	if client.IsNotFound(err) { // the namespace is gone, and its list with it
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "Could not read the egress allow-list of namespace "+ns, err)
		return
	}
	if state.set(allow, ns, &resp.Diagnostics); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	}
}

func (r *namespaceEgressResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan namespaceEgressModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &plan, &resp.Diagnostics, "update"); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Delete removes the list: the namespace's push queues and webhooks may
// call any public host again.
func (r *namespaceEgressResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state namespaceEgressModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns := state.Namespace.ValueString()
	_, err := retry(ctx, true, func() ([]string, error) { return r.p.in(ns).PutNamespaceEgress(ctx, ns, nil) })
	if err != nil && !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "Could not remove the egress allow-list of namespace "+ns, err)
	}
}

// ImportState takes the namespace's name.
func (r *namespaceEgressResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if err := tenancy.ValidateNamespace(req.ID); err != nil {
		resp.Diagnostics.AddError("Invalid import id", "Expected a namespace name: "+err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), req.ID)...)
}
