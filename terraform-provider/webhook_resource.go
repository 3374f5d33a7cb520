package provider

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

var (
	_ resource.ResourceWithConfigure   = (*webhookResource)(nil)
	_ resource.ResourceWithImportState = (*webhookResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*webhookResource)(nil)
)

// A lifecycle webhook endpoint (docs/api/webhooks.md). Its secret is
// shown by the API in the create's answer only, so it is kept from the
// create in the state, and is null after an import.

func newWebhookResource() resource.Resource { return &webhookResource{} }

type webhookResource struct{ namespacedBase }

type webhookModel struct {
	ID             types.String `tfsdk:"id"`
	Namespace      types.String `tfsdk:"namespace"`
	URL            types.String `tfsdk:"url"`
	Events         types.List   `tfsdk:"events"`
	Queues         types.List   `tfsdk:"queues"`
	Description    types.String `tfsdk:"description"`
	Enabled        types.Bool   `tfsdk:"enabled"`
	WithSecret     types.Bool   `tfsdk:"with_secret"`
	Secret         types.String `tfsdk:"secret"`
	SecretIDs      types.List   `tfsdk:"secret_ids"`
	DisabledReason types.String `tfsdk:"disabled_reason"`
	DisabledAt     types.String `tfsdk:"disabled_at"`
	CreatedAt      types.String `tfsdk:"created_at"`
	UpdatedAt      types.String `tfsdk:"updated_at"`
}

// webhookEventsDoc lists what events takes.
var webhookEventsDoc = "`" + strings.Join(wire.WebhookEvents, "`, `") + "`, or `*` for all"

func (r *webhookResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_webhook"
}

func (r *webhookResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A lifecycle webhook endpoint: Jobbie POSTs the namespace's job events it subscribes to, of the " +
			"queues it names, as signed CloudEvents (Standard Webhooks: verify with the keys of `jobbie_signing_keys` " +
			"and, with `with_secret`, with `secret`). Delivered at least once, in order, retried for 24 hours.\n\n" +
			"Every attribute but `namespace` and `with_secret` is changed in place (`PUT /api/v1/webhooks/{id}` replaces " +
			"the settings). An endpoint disabled for failing 3 days shows `disabled_reason`; the next apply that changes " +
			"it enables it again. The provider's key needs `webhook.read` and `webhook.manage` on every queue of the " +
			"namespace. Import with `<namespace>/<id>` (`secret` is then null: the API shows it only when it is made).",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("The endpoint's id (`wh_…`)."),
			"namespace": namespaceAttribute("webhook"),
			"url": schema.StringAttribute{
				MarkdownDescription: "The `https` URL events are POSTed to (port 443 or 1024 and above; its name must resolve " +
					"to public addresses unless the shard runs with `--push-allow-private`).",
				Required: true,
				Validators: []validator.String{stringvalidator.LengthBetween(1, wire.MaxWebhookURLBytes),
					stringvalidator.RegexMatches(regexp.MustCompile(`^https://`), "must be an https URL")},
			},
			"events": schema.ListAttribute{
				MarkdownDescription: "Event types to send: " + webhookEventsDoc + ".",
				ElementType:         types.StringType,
				Required:            true,
				Validators: []validator.List{listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(stringvalidator.OneOf(append([]string{"*"}, wire.WebhookEvents...)...))},
			},
			"queues": schema.ListAttribute{
				MarkdownDescription: "Queues whose events to send (at most 20): a name, a prefix ending in `*` (`emails.*`), " +
					"or `*`. Left out: every queue.",
				ElementType: types.StringType,
				Optional:    true,
				Validators:  []validator.List{listvalidator.SizeBetween(1, wire.MaxWebhookQueues)},
			},
			"description": schema.StringAttribute{
				MarkdownDescription: "What the endpoint is for, at most 512 bytes.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(""),
				Validators:          []validator.String{stringvalidator.LengthAtMost(wire.MaxWebhookDescription)},
			},
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether events are delivered. Defaults to `true`; disabled, the endpoint keeps its place " +
					"in the event log and resumes there (within the log's retention) when enabled again.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"with_secret": schema.BoolAttribute{
				MarkdownDescription: "Make a `whsec_` secret that signs (HMAC-SHA256, `v1`) beside the namespace's keys. " +
					"Defaults to `false`; changing it replaces the endpoint.",
				Optional:      true,
				Computed:      true,
				Default:       booldefault.StaticBool(false),
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			},
			"secret": computedSecret("The `whsec_` secret made with `with_secret`, as the create answered it; null " +
				"without `with_secret` and after an import. A rotation outside Terraform is not seen here."),
			"secret_ids": schema.ListAttribute{
				MarkdownDescription: "The ids (`whs_…`) of the endpoint's secrets that sign now.",
				ElementType:         types.StringType,
				Computed:            true,
			},
			"disabled_reason": computedString("Why deliveries stopped (failing for 3 days); null while they run."),
			"disabled_at":     computedTime("When deliveries stopped (RFC 3339); null while they run."),
			"created_at":      computedKept("When the endpoint was created (RFC 3339)."),
			"updated_at":      computedTime("When the endpoint was last changed (RFC 3339)."),
		},
	}
}

func (m *webhookModel) request(ctx context.Context, diags *diag.Diagnostics) client.WebhookRequest {
	req := client.WebhookRequest{URL: m.URL.ValueString(), Description: m.Description.ValueString(),
		Enabled: m.Enabled.ValueBoolPointer()}
	diags.Append(m.Events.ElementsAs(ctx, &req.Events, false)...)
	if !m.Queues.IsNull() {
		diags.Append(m.Queues.ElementsAs(ctx, &req.Queues, false)...)
	}
	return req
}

// set copies what the API answered into m; a secret the answer shows is
// kept, one it does not show stays as it was.
func (m *webhookModel) set(w *client.Webhook, ns string) {
	m.ID = types.StringValue(w.ID)
	m.Namespace = types.StringValue(ns)
	m.URL = types.StringValue(w.URL)
	m.Events = stringList(w.Events)
	m.Queues = types.ListNull(types.StringType)
	if len(w.Queues) > 0 {
		m.Queues = stringList(w.Queues)
	}
	m.Description = types.StringValue(w.Description)
	m.Enabled = types.BoolValue(w.Enabled)
	if m.WithSecret.IsNull() || m.WithSecret.IsUnknown() {
		m.WithSecret = types.BoolValue(len(w.SecretIDs) > 0) // an import
	}
	if w.Secret != "" {
		m.Secret = types.StringValue(w.Secret)
	} else if m.Secret.IsUnknown() {
		m.Secret = types.StringNull()
	}
	m.SecretIDs = stringList(w.SecretIDs)
	m.DisabledReason, m.DisabledAt = types.StringNull(), types.StringNull()
	if d := w.Disabled; d != nil {
		m.DisabledReason, m.DisabledAt = types.StringValue(d.Reason), timeValue(&d.At)
	}
	m.CreatedAt = timeValue(&w.CreatedAt)
	m.UpdatedAt = timeValue(&w.UpdatedAt)
}

func stringList(ss []string) types.List {
	vs := make([]attr.Value, 0, len(ss))
	for _, s := range ss {
		vs = append(vs, types.StringValue(s))
	}
	l, _ := types.ListValue(types.StringType, vs) // strings of a string list: cannot fail
	return l
}

// webhookError points a 400 at the attribute it names ("events[1]").
func webhookError(diags *diag.Diagnostics, summary string, err error) {
	e, ok := client.AsError(err)
	if ok && slices.ContainsFunc([]string{"url", "events", "queues", "description"}, func(a string) bool {
		return e.Field == a || strings.HasPrefix(e.Field, a+"[")
	}) {
		diags.AddAttributeError(fieldPath(e.Field), summary, apiDetail(err))
		return
	}
	apiError(diags, summary, err)
}

func (r *webhookResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *webhookModel) {
		body := plan.request(ctx, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
		body.Secret = plan.WithSecret.ValueBool()
		ns := plan.Namespace.ValueString()
		w, err := retry(ctx, true, func() (*client.Webhook, error) { return r.p.in(ns).CreateWebhook(ctx, body) })
		if err != nil {
			webhookError(&resp.Diagnostics, "Could not create webhook "+plan.URL.ValueString(), err)
			return
		}
		plan.set(w, ns)
	})
}

func (r *webhookResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[webhookModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	ns, id := state.Namespace.ValueString(), state.ID.ValueString()
	w, ok := refresh(ctx, resp, "Could not read webhook "+id, func() (*client.Webhook, error) { return r.p.in(ns).GetWebhook(ctx, id) })
	if ok {
		state.set(w, ns)
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (r *webhookResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, state *webhookModel) {
		body := plan.request(ctx, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
		ns, id := state.Namespace.ValueString(), state.ID.ValueString()
		w, err := retry(ctx, true, func() (*client.Webhook, error) { return r.p.in(ns).UpdateWebhook(ctx, id, body) })
		if err != nil {
			webhookError(&resp.Diagnostics, "Could not update webhook "+id, err)
			return
		}
		plan.Secret = state.Secret
		plan.set(w, ns)
	})
}

func (r *webhookResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[webhookModel](ctx, req.State, &resp.Diagnostics)
	if ok {
		ns, id := state.Namespace.ValueString(), state.ID.ValueString()
		deleteCall(ctx, &resp.Diagnostics, "Could not delete webhook "+id, func() error { return r.p.in(ns).DeleteWebhook(ctx, id) })
	}
}

// ImportState takes "<namespace>/<webhook id>".
func (r *webhookResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ns, id, ok := splitImportID(req.ID, &resp.Diagnostics, "<namespace>/<webhook id>")
	if !ok {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), ns)...)
}
