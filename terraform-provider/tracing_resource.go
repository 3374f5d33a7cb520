package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

// A namespace's OTLP endpoint is a resource of its own, as its egress
// allow-list is: the namespace's shard keeps it, not the namespace's
// record jobbie_namespace reads (namespace_egress_resource.go).

var (
	_ resource.ResourceWithConfigure   = (*tracingResource)(nil)
	_ resource.ResourceWithImportState = (*tracingResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*tracingResource)(nil)
)

func newTracingResource() resource.Resource {
	r := &tracingResource{}
	r.namespaceSetting = namespaceSetting[tracingModel, string]{
		noun: "the OTLP endpoint", removal: "remove", write: r.put, set: (*tracingModel).set,
		get: func(ctx context.Context, c *client.Client, _ string) (string, error) {
			held, err := c.GetTracing(ctx)
			if err == nil && held == "" {
				return "", errNone // removed outside Terraform
			}
			return held, err
		},
		// Removing the endpoint is setting none: the spans go nowhere.
		del: func(ctx context.Context, c *client.Client, _ string) error {
			_, err := c.SetTracing(ctx, "")
			return err
		},
	}
	return r
}

type tracingResource struct {
	namespaceSetting[tracingModel, string]
}

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
			"id":        computedKept("The namespace's name; also the import id."),
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

// put sets the endpoint the plan names and reads the answer into plan.
func (r *tracingResource) put(ctx context.Context, plan *tracingModel, _ tfsdk.Config, diags *diag.Diagnostics, what string) {
	ns := plan.Namespace.ValueString()
	held, err := retry(ctx, true, func() (string, error) { return r.p.in(ns).SetTracing(ctx, plan.OTLPEndpoint.ValueString()) })
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" the OTLP endpoint of namespace "+ns, err, "otlp_endpoint")
		return
	}
	plan.set(held, ns, diags)
}

func (m *tracingModel) set(held, ns string, _ *diag.Diagnostics) {
	m.ID, m.OTLPEndpoint = types.StringValue(ns), types.StringValue(held)
}
