package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
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

func newAlertRuleResource() resource.Resource {
	return &alertRuleResource{namedInNamespace[alertRuleModel, *wire.AlertRule]{
		noun: "alert rule", fields: []string{"name", "kind", "queue", "threshold", "for", "min_count"},
		validName: func(name string) bool { return tenancy.ValidateAlertName(name) == nil }, nameWhat: "a rule's name",
		write: func(ctx context.Context, c *client.Client, name string, m *alertRuleModel, create bool) (*wire.AlertRule, error) {
			if create {
				return c.CreateAlertRule(ctx, m.request(create))
			}
			return c.UpdateAlertRule(ctx, name, m.request(create))
		},
		get: func(ctx context.Context, c *client.Client, name string) (*wire.AlertRule, error) {
			return c.GetAlertRule(ctx, name)
		},
		del: func(ctx context.Context, c *client.Client, name string) error { return c.DeleteAlertRule(ctx, name) },
		set: (*alertRuleModel).set,
	}}
}

type alertRuleResource struct {
	namedInNamespace[alertRuleModel, *wire.AlertRule]
}

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
			"id":        computedKept("`<namespace>/<name>`; also the import id."),
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
				PlanModifiers: []planmodifier.String{sameDuration},
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
