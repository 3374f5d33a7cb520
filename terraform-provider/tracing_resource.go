package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
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

// A namespace's OTLP endpoint is a resource of its own, as its egress
// allow-list is: the namespace's shard keeps it, not the namespace's
// record jobbie_namespace reads (namespace_egress_resource.go).

var (
	_ resource.ResourceWithConfigure   = (*tracingResource)(nil)
	_ resource.ResourceWithImportState = (*tracingResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*tracingResource)(nil)
)

func newTracingResource() resource.Resource { return &tracingResource{} }

type tracingResource struct{ p *providerData }

type tracingModel struct {
	ID           types.String `tfsdk:"id"`
	Namespace    types.String `tfsdk:"namespace"`
	OTLPEndpoint types.String `tfsdk:"otlp_endpoint"`
}

func (r *tracingResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tracing"
}

func (r *tracingResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A namespace's OTLP endpoint: the OpenTelemetry collector that receives the spans of its jobs " +
			"(`send`, `receive` and `settle`, in the traces their `traceparent`s name) as OTLP/HTTP protobuf, while the " +
			"operator exports traces.\n\n`PUT /api/v1/tracing` sets it, so `otlp_endpoint` changes in place; an endpoint " +
			"the namespace already has is taken over. Destroying the resource removes it (the spans go nowhere).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The namespace's name; also the import id.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"namespace": namespaceAttribute("OTLP endpoint"),
			"otlp_endpoint": schema.StringAttribute{
				MarkdownDescription: "The collector's OTLP/HTTP traces URL (`https://otel.example.com/v1/traces`), held to the " +
					"rules of a push URL: `https`, a public address, and on the namespace's egress allow-list when it has one. " +
					"A URL that breaks one is refused naming `otlp_endpoint`, and nothing changes.",
				Required:   true,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
		},
	}
}

func (r *tracingResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.p = configure(req.ProviderData, &resp.Diagnostics)
}

func (r *tracingResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planDefaultNamespace(ctx, r.p, req, resp)
}

// put sets the endpoint the plan names and reads the answer into plan.
func (r *tracingResource) put(ctx context.Context, plan *tracingModel, diags *diag.Diagnostics, what string) {
	ns := plan.Namespace.ValueString()
	held, err := retry(ctx, true, func() (string, error) { return r.p.in(ns).SetTracing(ctx, plan.OTLPEndpoint.ValueString()) })
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" the OTLP endpoint of namespace "+ns, err, "otlp_endpoint")
		return
	}
	plan.ID, plan.OTLPEndpoint = types.StringValue(ns), types.StringValue(held)
}

func (r *tracingResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan tracingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &plan, &resp.Diagnostics, "set"); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Read takes the endpoint as the API holds it; none (removed outside
// Terraform, or the namespace gone) removes the resource from state.
func (r *tracingResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state tracingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns := state.Namespace.ValueString()
	held, err := retry(ctx, false, func() (string, error) { return r.p.in(ns).GetTracing(ctx) })
	if client.IsNotFound(err) || err == nil && held == "" {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "Could not read the OTLP endpoint of namespace "+ns, err)
		return
	}
	state.ID, state.OTLPEndpoint = types.StringValue(ns), types.StringValue(held)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *tracingResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan tracingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &plan, &resp.Diagnostics, "update"); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Delete removes the endpoint: the namespace's spans go nowhere.
func (r *tracingResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state tracingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns := state.Namespace.ValueString()
	_, err := retry(ctx, true, func() (string, error) { return r.p.in(ns).SetTracing(ctx, "") })
	if err != nil && !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "Could not remove the OTLP endpoint of namespace "+ns, err)
	}
}

// ImportState takes the namespace's name.
func (r *tracingResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if err := tenancy.ValidateNamespace(req.ID); err != nil {
		resp.Diagnostics.AddError("Invalid import id", "Expected a namespace name: "+err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), req.ID)...)
}
