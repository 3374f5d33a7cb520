package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var (
	_ datasource.DataSourceWithConfigure = (*queueDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*queuesDataSource)(nil)
)

// queueData is a queue as the data sources show it: settings, state and
// counts.
type queueData struct {
	Name             types.String         `tfsdk:"name"`
	Description      types.String         `tfsdk:"description"`
	Paused           types.Bool           `tfsdk:"paused"`
	Draining         types.Bool           `tfsdk:"draining"`
	Drained          types.Bool           `tfsdk:"drained"`
	Concurrency      types.Int64          `tfsdk:"concurrency"`
	KeyConc          *keyConcurrencyModel `tfsdk:"key_concurrency"`
	Throttle         *throttleModel       `tfsdk:"throttle"`
	Defaults         *queueDefaultsModel  `tfsdk:"defaults"`
	Counts           *queueCountsModel    `tfsdk:"counts"`
	Throughput       types.Float64        `tfsdk:"throughput"`
	OldestPendingAge types.Float64        `tfsdk:"oldest_pending_age"`
	Push             *pushModel           `tfsdk:"push"`
	Schema           jsontypes.Normalized `tfsdk:"schema"`
	SchemaVersion    types.Int64          `tfsdk:"schema_version"`
}

func queueDataFromAPI(q *client.Queue) queueData {
	return queueData{
		Name: types.StringValue(q.Name), Description: types.StringValue(q.Description),
		Paused: types.BoolValue(q.Paused), Draining: types.BoolValue(q.Draining), Drained: types.BoolValue(q.Drained),
		Concurrency: types.Int64PointerValue(q.Concurrency), Throttle: throttleFromAPI(q.Throttle),
		KeyConc:  keyConcurrencyFromAPI(q.KeyConcurrency),
		Defaults: defaultsFromAPI(q.Defaults, true), Counts: countsFromAPI(q.Counts),
		Throughput: types.Float64Value(q.Throughput), OldestPendingAge: types.Float64Value(q.OldestPendingAge),
		Push:   pushFromAPI(q.Push, &pushModel{Headers: map[string]string{}}),
		Schema: jsonValue(q.Schema), SchemaVersion: types.Int64Value(q.SchemaVersion),
	}
}

// queueDataAttributes are the computed attributes of a queue in the data
// sources (name aside).
func queueDataAttributes() map[string]schema.Attribute {
	dur := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true, CustomType: durationType{}}
	}
	n := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
	}
	counts := map[string]schema.Attribute{}
	for _, s := range []string{"pending", "scheduled", "active", "retrying", "completed", "dead", "cancelled", "held"} {
		counts[s] = n("Jobs " + s + ".")
	}
	return map[string]schema.Attribute{
		"description": schema.StringAttribute{MarkdownDescription: "Description.", Computed: true},
		"paused":      schema.BoolAttribute{MarkdownDescription: "Whether workers get none of its jobs.", Computed: true},
		"draining":    schema.BoolAttribute{MarkdownDescription: "Whether it is being drained.", Computed: true},
		"drained":     schema.BoolAttribute{MarkdownDescription: "Draining, and no job active.", Computed: true},
		"concurrency": n("Most jobs active at once across all workers; null for no limit."),
		"key_concurrency": schema.SingleNestedAttribute{
			MarkdownDescription: "Cap per concurrency key: at most `max` of its jobs with the same `concurrency_key` active at once; null for none.",
			Computed:            true,
			Attributes:          map[string]schema.Attribute{"max": n("Active jobs per concurrency key.")},
		},
		"throttle": schema.SingleNestedAttribute{
			MarkdownDescription: "Rate limit: at most `rate` fetches in any window of `period`; null for none.",
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"rate":   n("Fetches per period."),
				"period": dur("The window."),
			},
		},
		"defaults": schema.SingleNestedAttribute{
			MarkdownDescription: "What its jobs get for options their producer left out; null fields have no queue default.",
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"max_retries":      n("Retries before a job is dead."),
				"retry_backoff":    schema.StringAttribute{MarkdownDescription: "Backoff between retries.", Computed: true},
				"retry_base_delay": dur("First retry delay."),
				"retry_max_delay":  dur("Longest retry delay."),
				"lease_duration":   dur("Lease of a fetch that names none."),
				"expire_after":     dur("A job not started by then expires."),
				"retention":        dur("How long finished jobs are kept."),
			},
		},
		"counts": schema.SingleNestedAttribute{
			MarkdownDescription: "Jobs per state, when read.",
			Computed:            true,
			Attributes:          counts,
		},
		"throughput":         schema.Float64Attribute{MarkdownDescription: "Completed jobs per minute over the last five minutes.", Computed: true},
		"oldest_pending_age": schema.Float64Attribute{MarkdownDescription: "Seconds the oldest pending job has waited.", Computed: true},
		"schema": schema.StringAttribute{MarkdownDescription: "The JSON Schema its payloads must satisfy (canonical JSON: keys " +
			"sorted, no spaces), or null (`jobbie_queue`'s `schema` sets it).", Computed: true, CustomType: jsontypes.NormalizedType{}},
		"schema_version": schema.Int64Attribute{MarkdownDescription: "The version of its schema (0: none).", Computed: true},
		"push":           pushDataAttribute(),
	}
}

func newQueueDataSource() datasource.DataSource { return &queueDataSource{} }

type queueDataSource struct{ dataSourceBase }

type queueDataSourceModel struct {
	Namespace types.String `tfsdk:"namespace"`
	queueData
}

func (d *queueDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

func (d *queueDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := queueDataAttributes()
	attrs["namespace"] = schema.StringAttribute{
		MarkdownDescription: "Namespace of the queue. Defaults to the provider's `namespace`.",
		Optional:            true, Computed: true, Validators: []validator.String{namespaceName()},
	}
	attrs["name"] = schema.StringAttribute{MarkdownDescription: "Queue name.", Required: true, Validators: []validator.String{queueName()}}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a queue: its settings, state and job counts. A queue that does not exist is an error.",
		Attributes:          attrs,
	}
}

func (d *queueDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[queueDataSourceModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	ns, name := d.namespace(m.Namespace), m.Name.ValueString()
	q, ok := readCall(ctx, &resp.Diagnostics, "Could not read queue "+ns+"/"+name, nil,
		func() (*client.Queue, error) { return d.p.in(ns).GetQueue(ctx, name) })
	if !ok {
		return
	}
	m.Namespace = types.StringValue(ns)
	m.queueData = queueDataFromAPI(q)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func newQueuesDataSource() datasource.DataSource { return &queuesDataSource{} }

type queuesDataSource struct{ dataSourceBase }

type queuesDataSourceModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Names     []string     `tfsdk:"names"`
	Queues    []queueData  `tfsdk:"queues"`
}

func (d *queuesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queues"
}

func (d *queuesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := queueDataAttributes()
	attrs["name"] = schema.StringAttribute{MarkdownDescription: "Queue name.", Computed: true}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the queues of a namespace: those configured and those that exist because jobs were enqueued to them.",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace. Defaults to the provider's `namespace`.",
				Optional:            true, Computed: true, Validators: []validator.String{namespaceName()},
			},
			"names": schema.ListAttribute{MarkdownDescription: "Queue names, in the API's order.", ElementType: types.StringType, Computed: true},
			"queues": schema.ListNestedAttribute{
				MarkdownDescription: "The queues, in the same order.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: attrs},
			},
		},
	}
}

func (d *queuesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[queuesDataSourceModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	ns := d.namespace(m.Namespace)
	list, ok := readCall(ctx, &resp.Diagnostics, "Could not list the queues of "+ns, nil,
		func() ([]client.Queue, error) { return d.p.in(ns).ListQueues(ctx) })
	if !ok {
		return
	}
	m.Namespace = types.StringValue(ns)
	m.Names, m.Queues = make([]string, 0, len(list)), make([]queueData, 0, len(list))
	for i := range list {
		m.Names = append(m.Names, list[i].Name)
		m.Queues = append(m.Queues, queueDataFromAPI(&list[i]))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}
