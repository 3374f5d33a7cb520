package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// jobbie_alert_rule: one of a namespace's alert rules
// (docs/api/alerts.md). Its firing state is the service's, not
// configuration: the resource holds the settings alone.

var (
	_ resource.ResourceWithConfigure   = (*alertRuleResource)(nil)
	_ resource.ResourceWithImportState = (*alertRuleResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*alertRuleResource)(nil)
)

func newAlertRuleResource() resource.Resource { return &alertRuleResource{} }

type alertRuleResource struct{ p *providerData }

type alertRuleModel struct {
	ID        types.String   `tfsdk:"id"`
	Namespace types.String   `tfsdk:"namespace"`
	Name      types.String   `tfsdk:"name"`
	Kind      types.String   `tfsdk:"kind"`
	Queue     types.String   `tfsdk:"queue"`
	Threshold types.Float64  `tfsdk:"threshold"`
	For       durationString `tfsdk:"for"`
	MinCount  types.Int64    `tfsdk:"min_count"`
	Enabled   types.Bool     `tfsdk:"enabled"`
}

func (r *alertRuleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_alert_rule"
}

func (r *alertRuleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An alert rule on a namespace's queues. The shard leader evaluates it every 15 seconds; when " +
			"its condition begins to hold on a queue it fires there, and when it no longer holds it resolves: the webhook " +
			"events `alert.firing` and `alert.resolved`, delivered to the namespace's `jobbie_webhook` endpoints subscribed " +
			"to them. Every setting but `name` and `namespace` changes in place.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "`<namespace>/<name>`; also the import id.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"namespace": namespaceAttribute("alert rule"),
			"name": schema.StringAttribute{
				MarkdownDescription: "The rule's name, unique in its namespace: 1-64 letters, digits, `.`, `_` or `-`. " +
					"Changing it replaces the rule.",
				Required:      true,
				Validators:    []validator.String{stringCheck{"alert rule name", tenancy.ValidateAlertName}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"kind": schema.StringAttribute{
				MarkdownDescription: "`queue_depth_above` (more than `threshold` jobs pending for `for`), " +
					"`oldest_pending_above` (the oldest pending job older than `for`), `dead_increase` (at least " +
					"`threshold` jobs died within `for`), `failure_rate_above` (more than `threshold` % of the jobs " +
					"finished within `for` died, once `min_count` finished) or `no_worker` (jobs pending and no fetch " +
					"from the queue for `for`).",
				Required:   true,
				Validators: []validator.String{stringvalidator.OneOf(wire.AlertKinds...)},
			},
			"queue": schema.StringAttribute{
				MarkdownDescription: "The queue it watches; `\"\"` (the default): every queue of the namespace, each on its own.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(""),
				Validators:          []validator.String{stringvalidator.Any(stringvalidator.LengthAtMost(0), queueName())},
			},
			"threshold": schema.Float64Attribute{
				MarkdownDescription: "Jobs (`queue_depth_above`, a whole number; `dead_increase`, from 1) or a percentage " +
					"(`failure_rate_above`, above 0, at most 100); the kinds measured in time take none (0).",
				Optional:   true,
				Computed:   true,
				Default:    float64default.StaticFloat64(0),
				Validators: []validator.Float64{float64validator.Between(0, wire.MaxAlertThreshold)},
			},
			"for": schema.StringAttribute{
				MarkdownDescription: "A duration (`\"30s\"`, `\"5m\"`), at most 7 days (`168h`): how long the condition " +
					"holds, the age, or the window. 0 only for `queue_depth_above`.",
				Required:      true,
				CustomType:    durationType{},
				Validators:    []validator.String{duration(0, wire.MaxAlertFor)},
				PlanModifiers: []planmodifier.String{sameDuration{}},
			},
			"min_count": schema.Int64Attribute{
				MarkdownDescription: "`failure_rate_above` only: the jobs that must have finished within `for` before the " +
					"rate counts; absent, the API's default, 10.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(1, wire.MaxAlertMinCount)},
			},
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether the rule is evaluated (default `true`); disabling it resolves what it fires.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
		},
	}
}

func (r *alertRuleResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.p = configure(req.ProviderData, &resp.Diagnostics)
}

func (r *alertRuleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planDefaultNamespace(ctx, r.p, req, resp)
}

func (m *alertRuleModel) request(create bool) wire.AlertRuleRequest {
	req := wire.AlertRuleRequest{Kind: m.Kind.ValueString(), Queue: m.Queue.ValueString(), Threshold: m.Threshold.ValueFloat64(),
		For: m.For.ValueString(), Enabled: new(m.Enabled.ValueBool())}
	if !m.MinCount.IsNull() {
		req.MinCount = int(m.MinCount.ValueInt64())
	}
	if create {
		req.Name = m.Name.ValueString()
	}
	return req
}

// set reads a rule as the API holds it into m; For keeps the
// configuration's spelling when it means the same duration.
func (m *alertRuleModel) set(ns string, a *wire.AlertRule) {
	m.ID = types.StringValue(ns + "/" + a.Name)
	m.Namespace, m.Name, m.Kind, m.Queue = types.StringValue(ns), types.StringValue(a.Name), types.StringValue(a.Kind), types.StringValue(a.Queue)
	m.Threshold, m.Enabled = types.Float64Value(a.Threshold), types.BoolValue(a.Enabled)
	if eq, _ := m.For.StringSemanticEquals(context.Background(), durationString{StringValue: types.StringValue(a.For)}); !eq {
		m.For = durationString{StringValue: types.StringValue(a.For)}
	}
	// An absent min_count stays absent while the API holds its default.
	if !(m.MinCount.IsNull() && a.MinCount == wire.DefaultAlertMinCount) {
		m.MinCount = types.Int64Null()
		if a.MinCount > 0 {
			m.MinCount = types.Int64Value(int64(a.MinCount))
		}
	}
}

// write creates or replaces the rule the plan describes.
func (r *alertRuleResource) write(ctx context.Context, plan *alertRuleModel, diags *diag.Diagnostics, create bool) {
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	what := "update"
	if create {
		what = "create"
	}
	a, err := retry(ctx, true, func() (*wire.AlertRule, error) {
		if create {
			return r.p.in(ns).CreateAlertRule(ctx, plan.request(create))
		}
		return r.p.in(ns).UpdateAlertRule(ctx, name, plan.request(create))
	})
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" alert rule "+name+" in namespace "+ns, err, "name", "kind", "queue", "threshold", "for", "min_count")
		return
	}
	plan.set(ns, a)
}

func (r *alertRuleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan alertRuleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.write(ctx, &plan, &resp.Diagnostics, true); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *alertRuleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state alertRuleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	a, err := retry(ctx, false, func() (*wire.AlertRule, error) { return r.p.in(ns).GetAlertRule(ctx, name) })
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "Could not read alert rule "+name+" in namespace "+ns, err)
		return
	}
	state.set(ns, a)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *alertRuleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan alertRuleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.write(ctx, &plan, &resp.Diagnostics, false); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *alertRuleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state alertRuleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	_, err := retry(ctx, true, func() (struct{}, error) {
		return struct{}{}, r.p.in(ns).DeleteAlertRule(ctx, name)
	})
	if err != nil && !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "Could not delete alert rule "+name+" in namespace "+ns, err)
	}
}

// ImportState takes "<namespace>/<name>".
func (r *alertRuleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ns, name, ok := splitImportID(req.ID, &resp.Diagnostics, "<namespace>/<name>")
	if !ok {
		return
	}
	if err := tenancy.ValidateAlertName(name); err != nil || strings.Contains(name, "/") {
		resp.Diagnostics.AddError("Invalid import id", "Expected <namespace>/<name> with a rule's name: "+req.ID)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), ns)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
}
