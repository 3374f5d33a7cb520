package provider

import (
	"context"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// A queue's push settings as Terraform sees them: the resource's optional
// push block (its absence is a pull queue) and the data sources' view.
// disabled is the API's alone: set when a handler answered 410 Gone,
// cleared by the next PUT of the queue, which any apply that changes the
// queue makes.

type pushModel struct {
	URL         types.String      `tfsdk:"url"`
	Mode        types.String      `tfsdk:"mode"`
	Timeout     durationString    `tfsdk:"timeout"`
	MaxInFlight types.Int64       `tfsdk:"max_in_flight"`
	Headers     map[string]string `tfsdk:"headers"`
	Disabled    types.Object      `tfsdk:"disabled"` // unknown in a plan: computed
}

var pushDisabledTypes = map[string]attr.Type{"reason": types.StringType, "at": types.StringType}

const pushDoc = "Makes it a push queue: Jobbie POSTs each job, signed, to `url` and the answer acks or fails it " +
	"(see the push API's documentation). Left out: a pull queue; removing the block makes it one again."

const pushDisabledDoc = "Set when a handler answered 410 Gone: Jobbie stopped pushing the queue (`reason`, and `at` in " +
	"RFC 3339); null otherwise. Read-only, and no change by itself: the next apply that changes the queue declares it " +
	"again, which enables push again (so does `jobbie queues set <name> --push-enable`)."

func pushDisabledAttrs() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"reason": schema.StringAttribute{MarkdownDescription: "Why push stopped.", Computed: true},
		"at":     schema.StringAttribute{MarkdownDescription: "When (RFC 3339).", Computed: true},
	}
}

func pushResourceAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: pushDoc,
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: "The handler's URL: `https` only, port 443 or 1024 and above; its name must resolve to " +
					"public addresses (the API checks it).",
				Required:   true,
				Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^https://`), "must be an https URL")},
			},
			"mode": schema.StringAttribute{
				MarkdownDescription: "`always` (every job is pushed) or `when_no_workers` (pushed only while no worker has fetched " +
					"from the queue for 30 s). Defaults to `always`.",
				Optional:   true,
				Computed:   true,
				Default:    stringdefault.StaticString(wire.PushAlways),
				Validators: []validator.String{stringvalidator.OneOf(wire.PushAlways, wire.PushWhenNoWorkers)},
			},
			"timeout": schema.StringAttribute{
				MarkdownDescription: "How long one delivery may take, a duration from 1s to 15m. Defaults to `30s`.",
				Optional:            true,
				Computed:            true,
				CustomType:          durationType{},
				Default:             stringdefault.StaticString(wire.FormatDuration(wire.DefaultPushTimeout)),
				Validators:          []validator.String{duration(wire.MinPushTimeout, wire.MaxPushTimeout)},
				PlanModifiers:       []planmodifier.String{sameDuration},
			},
			"max_in_flight": schema.Int64Attribute{
				MarkdownDescription: "Deliveries at once, 1 to 1000 (the queue's concurrency and throttle bound them too). Defaults to 10.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(wire.DefaultPushMaxInFlight),
				Validators:          []validator.Int64{int64validator.Between(1, wire.MaxPushMaxInFlight)},
			},
			"headers": schema.MapAttribute{
				MarkdownDescription: "Headers sent with every delivery (at most 20; `Content-Type`, `Webhook-*`, `Host` and other " +
					"transport headers are Jobbie's). Sensitive: they often carry a credential.",
				Optional:    true,
				Sensitive:   true,
				ElementType: types.StringType,
			},
			"disabled": schema.SingleNestedAttribute{
				MarkdownDescription: pushDisabledDoc,
				Computed:            true,
				Attributes:          pushDisabledAttrs(),
				PlanModifiers:       []planmodifier.Object{enablesPush{}},
			},
		},
	}
}

// enablesPush plans disabled as null whenever the queue is put (the
// framework leaves it unknown then): the PUT enables push again.
type enablesPush struct{}

func (enablesPush) Description(context.Context) string {
	return "an apply that puts the queue enables push again"
}

func (e enablesPush) MarkdownDescription(ctx context.Context) string { return e.Description(ctx) }

func (enablesPush) PlanModifyObject(_ context.Context, req planmodifier.ObjectRequest, resp *planmodifier.ObjectResponse) {
	if req.PlanValue.IsUnknown() {
		resp.PlanValue = types.ObjectNull(pushDisabledTypes)
	}
}

func pushDataAttribute() dschema.SingleNestedAttribute {
	s := func(desc string) dschema.StringAttribute {
		return dschema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	return dschema.SingleNestedAttribute{
		MarkdownDescription: "Its push settings; null for a pull queue.",
		Computed:            true,
		Attributes: map[string]dschema.Attribute{
			"url":  s("The handler's URL."),
			"mode": s("`always` or `when_no_workers`."),
			"timeout": dschema.StringAttribute{MarkdownDescription: "How long one delivery may take.", Computed: true,
				CustomType: durationType{}},
			"max_in_flight": dschema.Int64Attribute{MarkdownDescription: "Deliveries at once.", Computed: true},
			"headers": dschema.MapAttribute{MarkdownDescription: "Headers sent with every delivery.", Computed: true,
				Sensitive: true, ElementType: types.StringType},
			"disabled": dschema.SingleNestedAttribute{MarkdownDescription: pushDisabledDoc, Computed: true,
				Attributes: map[string]dschema.Attribute{"reason": s("Why push stopped."), "at": s("When (RFC 3339).")}},
		},
	}
}

// pushFromAPI reads a queue's push settings. prior is what the state or
// plan held: its spelling of the same timeout stays, and headers it left
// out, or wrote as {}, stay so when the queue has none.
func pushFromAPI(p *client.QueuePush, prior *pushModel) *pushModel {
	if p == nil {
		return nil
	}
	m := &pushModel{URL: types.StringValue(p.URL), Mode: types.StringValue(p.Mode), Timeout: durationValue(p.Timeout),
		MaxInFlight: types.Int64Value(int64(p.MaxInFlight)), Disabled: types.ObjectNull(pushDisabledTypes)}
	if prior != nil && !prior.Timeout.IsNull() && !prior.Timeout.IsUnknown() && goDuration(prior.Timeout) == goDuration(m.Timeout) {
		m.Timeout = prior.Timeout // the configuration's spelling ("60s" for "1m"): no change to plan
	}
	if len(p.Headers) > 0 {
		m.Headers = p.Headers
	} else if prior != nil && prior.Headers != nil {
		m.Headers = map[string]string{}
	}
	if d := p.Disabled; d != nil {
		m.Disabled = types.ObjectValueMust(pushDisabledTypes, map[string]attr.Value{
			"reason": types.StringValue(d.Reason), "at": types.StringValue(d.At.UTC().Format(time.RFC3339))})
	}
	return m
}

// toAPI is the push spec m declares; nil for a pull queue.
func (m *pushModel) toAPI() *client.QueuePushSpec {
	if m == nil {
		return nil
	}
	return &client.QueuePushSpec{URL: m.URL.ValueString(), Mode: m.Mode.ValueString(), Timeout: goDuration(m.Timeout),
		MaxInFlight: int(m.MaxInFlight.ValueInt64()), Headers: m.Headers}
}
