package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var _ datasource.DataSourceWithConfigure = (*webhooksDataSource)(nil)

// A namespace's lifecycle webhook endpoints, as read (no secrets: the
// API shows one only when it is made).

func newWebhooksDataSource() datasource.DataSource { return &webhooksDataSource{} }

type webhooksDataSource struct{ dataSourceBase }

type webhooksModel struct {
	Namespace types.String       `tfsdk:"namespace"`
	Webhooks  []webhookDataModel `tfsdk:"webhooks"`
}

type webhookDataModel struct {
	ID             types.String `tfsdk:"id"`
	URL            types.String `tfsdk:"url"`
	Events         types.List   `tfsdk:"events"`
	Queues         types.List   `tfsdk:"queues"`
	Description    types.String `tfsdk:"description"`
	Enabled        types.Bool   `tfsdk:"enabled"`
	SecretIDs      types.List   `tfsdk:"secret_ids"`
	DisabledReason types.String `tfsdk:"disabled_reason"`
	DisabledAt     types.String `tfsdk:"disabled_at"`
	FailingSince   types.String `tfsdk:"failing_since"`
	CreatedAt      types.String `tfsdk:"created_at"`
	UpdatedAt      types.String `tfsdk:"updated_at"`
}

func (d *webhooksDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_webhooks"
}

func (d *webhooksDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	s := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	l := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: desc, ElementType: types.StringType, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a namespace's lifecycle webhook endpoints (`GET /api/v1/webhooks`). The provider's key " +
			"needs `webhook.read` on every queue of the namespace. Secrets are not shown (only when made: see `jobbie_webhook`).",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace. Defaults to the provider's `namespace`.",
				Optional:            true, Computed: true, Validators: []validator.String{namespaceName()},
			},
			"webhooks": schema.ListNestedAttribute{
				MarkdownDescription: "The endpoints, oldest first.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":              s("The endpoint's id (`wh_…`)."),
					"url":             s("The URL events are POSTed to."),
					"events":          l("The event types it receives (`*`: all)."),
					"queues":          l("The queue patterns whose events it receives; empty: every queue."),
					"description":     s("What it is for."),
					"enabled":         schema.BoolAttribute{MarkdownDescription: "Whether events are delivered.", Computed: true},
					"secret_ids":      l("The ids of its secrets that sign now."),
					"disabled_reason": s("Why deliveries stopped (failing for 3 days); null while they run."),
					"disabled_at":     s("When deliveries stopped (RFC 3339); null while they run."),
					"failing_since":   s("The first failure of the current run of failures (RFC 3339); null while deliveries succeed."),
					"created_at":      s("When it was created (RFC 3339)."),
					"updated_at":      s("When it was last changed (RFC 3339)."),
				}},
			},
		},
	}
}

func (d *webhooksDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[webhooksModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	ns := d.namespace(m.Namespace)
	ws, ok := readCall(ctx, &resp.Diagnostics, "Could not read the webhooks of "+ns, nil,
		func() ([]client.Webhook, error) { return d.p.in(ns).ListWebhooks(ctx) })
	if !ok {
		return
	}
	m.Namespace = types.StringValue(ns)
	m.Webhooks = make([]webhookDataModel, 0, len(ws))
	for _, w := range ws {
		v := webhookDataModel{ID: types.StringValue(w.ID), URL: types.StringValue(w.URL), Events: stringList(w.Events),
			Queues: stringList(w.Queues), Description: types.StringValue(w.Description), Enabled: types.BoolValue(w.Enabled),
			SecretIDs: stringList(w.SecretIDs), DisabledReason: types.StringNull(), DisabledAt: types.StringNull(),
			FailingSince: timeValue(w.FailingSince), CreatedAt: timeValue(&w.CreatedAt), UpdatedAt: timeValue(&w.UpdatedAt)}
		if dis := w.Disabled; dis != nil {
			v.DisabledReason, v.DisabledAt = types.StringValue(dis.Reason), timeValue(&dis.At)
		}
		m.Webhooks = append(m.Webhooks, v)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}
