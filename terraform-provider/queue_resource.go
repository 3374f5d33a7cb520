package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

var (
	_ resource.ResourceWithConfigure   = (*queueResource)(nil)
	_ resource.ResourceWithImportState = (*queueResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*queueResource)(nil)
)

func newQueueResource() resource.Resource { return &queueResource{} }

type queueResource struct{ resourceBase }

type queueModel struct {
	ID          types.String         `tfsdk:"id"`
	Namespace   types.String         `tfsdk:"namespace"`
	Name        types.String         `tfsdk:"name"`
	Description types.String         `tfsdk:"description"`
	Paused      types.Bool           `tfsdk:"paused"`
	Force       types.Bool           `tfsdk:"force_destroy"`
	Concurrency types.Int64          `tfsdk:"concurrency"`
	KeyConc     *keyConcurrencyModel `tfsdk:"key_concurrency"`
	Throttle    *throttleModel       `tfsdk:"throttle"`
	Defaults    *queueDefaultsModel  `tfsdk:"defaults"`
	Push        *pushModel           `tfsdk:"push"`
	Schema      jsontypes.Normalized `tfsdk:"schema"`
	SchemaVer   types.Int64          `tfsdk:"schema_version"`
}

func (r *queueResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

func (r *queueResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	dur := func(desc string, min, max time.Duration) schema.StringAttribute {
		return schema.StringAttribute{
			MarkdownDescription: desc + " A duration (`90s`, `5m`, `1h30m`) from " + wire.FormatDuration(min) + " to " + wire.FormatDuration(max) + ".",
			Optional:            true,
			CustomType:          durationType{},
			Validators:          []validator.String{duration(min, max)},
			PlanModifiers:       []planmodifier.String{sameDuration},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A queue's whole configuration, declared: `PUT /api/v1/queues/{name}` creates or replaces it in one " +
			"idempotent call, and anything left out is reset to its default (no concurrency limit, no key concurrency cap, no throttle, " +
			"no queue defaults, no payload schema), except `paused`: left out, it is not managed, and a pause or resume made outside Terraform (by the " +
			"console or the CLI during an incident) stays as it is. A queue that already exists because jobs were enqueued to it is " +
			"taken over as it is, jobs and all.\n\n" +
			"Destroying a queue that holds jobs (in any state, finished ones still kept included) fails unless `force_destroy` is true, " +
			"which deletes the queue **and all its jobs** (`DELETE /api/v1/queues/{name}?confirm=true`). A change of `name` replaces " +
			"the queue, so the same holds for it.\n\n" +
			"Durations are compared by value: `60s` and `1m` are the same and never show as a change; `schema` by meaning: key order and " +
			"spaces never show as a change.",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("`<namespace>/<name>`; also the import id."),
			"namespace": namespaceAttribute("queue"),
			"name": schema.StringAttribute{
				MarkdownDescription: "Queue name (1-128 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit). " +
					"Changing it replaces the queue.",
				Required:      true,
				Validators:    []validator.String{queueName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"description": descriptionAttribute("Free text, at most 1024 characters."),
			"paused": schema.BoolAttribute{
				MarkdownDescription: "Whether workers get none of its jobs (enqueues go on). Left out, Terraform does not manage it: " +
					"the queue stays paused or running as it is (a new queue runs), and a pause or resume made outside Terraform " +
					"is not undone by the next apply. Set it to hold the queue so.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"force_destroy": schema.BoolAttribute{
				MarkdownDescription: "Whether destroying (or replacing) the queue also deletes the jobs it holds. Defaults to " +
					"`false`: destroying a queue that holds any fails. Only Terraform knows it (it is not sent to the API); apply " +
					"it before the destroy that needs it.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"concurrency": schema.Int64Attribute{
				MarkdownDescription: "Most of its jobs active at once across all workers (1 = one at a time). Left out: no limit.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.Between(1, maxConcurrency)},
			},
			"key_concurrency": schema.SingleNestedAttribute{
				MarkdownDescription: "Cap per concurrency key: at most `max` of the queue's jobs with the same `concurrency_key` " +
					"active at once (jobs without one are not capped by it). Left out: no cap.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"max": schema.Int64Attribute{
						MarkdownDescription: "Active jobs per concurrency key, 1 to 10000.",
						Required:            true,
						Validators:          []validator.Int64{int64validator.Between(1, maxKeyConcurrency)},
					},
				},
			},
			"throttle": schema.SingleNestedAttribute{
				MarkdownDescription: "Rate limit: at most `rate` fetches in any window of `period`. Left out: none.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"rate": schema.Int64Attribute{
						MarkdownDescription: "Fetches per period, 1 to 1000000.",
						Required:            true,
						Validators:          []validator.Int64{int64validator.Between(1, maxThrottleRate)},
					},
					"period": schema.StringAttribute{
						MarkdownDescription: "The window, from 1s to 7 days (`168h`).",
						Required:            true,
						CustomType:          durationType{},
						Validators:          []validator.String{duration(minThrottlePeriod, maxThrottlePeriod)},
						PlanModifiers:       []planmodifier.String{sameDuration},
					},
				},
			},
			"defaults": schema.SingleNestedAttribute{
				MarkdownDescription: "What the queue's jobs get for options their producer left out (and a fetch without " +
					"`lease_duration`). Each field left out has no queue default.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"max_retries": schema.Int64Attribute{
						MarkdownDescription: "Retries before a job is dead, 0 to 1000.",
						Optional:            true,
						Validators:          []validator.Int64{int64validator.Between(0, 1000)},
					},
					"retry_backoff": schema.StringAttribute{
						MarkdownDescription: "Backoff between retries: `exponential`, `linear`, `fixed` or `none`.",
						Optional:            true,
						Validators:          []validator.String{stringvalidator.OneOf(backoffs...)},
					},
					"retry_base_delay": dur("First retry delay.", time.Millisecond, maxDelay),
					"retry_max_delay":  dur("Longest retry delay; not less than `retry_base_delay`.", time.Millisecond, maxDelay),
					"lease_duration":   dur("Lease of a fetch that names none.", minLease, maxLease),
					"expire_after":     dur("A job not started by then expires.", time.Second, maxExpireAfter),
					"retention":        dur("How long finished jobs are kept.", minRetention, maxRetention),
				},
			},
			"push":           pushResourceAttribute(),
			"schema":         queueSchemaAttribute(),
			"schema_version": queueSchemaVersionAttribute(),
		},
	}
}

func (r *queueResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planDefaultNamespace(ctx, r.p, req, resp)
	planSchemaVersion(ctx, req, resp)
}

// spec is the queue as m declares it; paused is what to send for the
// pause (see put).
func (m *queueModel) spec(paused bool) client.QueueSpec {
	s := client.QueueSpec{Description: m.Description.ValueString(), Paused: paused, Defaults: m.Defaults.toAPI(),
		Concurrency: m.Concurrency.ValueInt64Pointer(), Push: m.Push.toAPI(), Schema: schemaSpec(m.Schema)}
	if k := m.KeyConc; k != nil {
		s.KeyConcurrency = k.Max.ValueInt64Pointer()
	}
	if t := m.Throttle; t != nil {
		s.Throttle = &client.QueueThrottleSpec{Rate: t.Rate.ValueInt64(), Period: goDuration(t.Period)}
	}
	return s
}

// set copies the API's view of the queue into m; defaults that set
// nothing stay as they were written (left out, or an empty block).
func (m *queueModel) set(q *client.Queue, ns string) {
	m.ID = types.StringValue(ns + "/" + q.Name)
	m.Namespace = types.StringValue(ns)
	m.Name = types.StringValue(q.Name)
	m.Description = types.StringValue(q.Description)
	m.Paused = types.BoolValue(q.Paused)
	m.Concurrency = types.Int64PointerValue(q.Concurrency)
	m.KeyConc = keyConcurrencyFromAPI(q.KeyConcurrency)
	m.Throttle = throttleFromAPI(q.Throttle)
	m.Defaults = defaultsFromAPI(q.Defaults, m.Defaults != nil)
	m.Push = pushFromAPI(q.Push, m.Push)
	m.Schema = jsonValue(q.Schema) // the canonical form: the framework keeps a prior value equal in meaning
	m.SchemaVer = types.Int64Value(q.SchemaVersion)
}

// put creates or replaces the queue as m declares it, and reads the
// answer into m. The API's PUT sets the pause too, so a configuration
// that leaves paused out sends the pause the queue has now (read just
// before; a new queue runs): only a pause made in the instant between the
// two calls would be undone.
func (r *queueResource) put(ctx context.Context, config tfsdk.Config, m *queueModel, diags *diag.Diagnostics, what string) {
	ns, name := m.Namespace.ValueString(), m.Name.ValueString()
	var declared types.Bool
	diags.Append(config.GetAttribute(ctx, path.Root("paused"), &declared)...)
	if diags.HasError() {
		return
	}
	paused := declared.ValueBool()
	if declared.IsNull() {
		cur, ok := readCall(ctx, diags, "Could not read queue "+ns+"/"+name+" before the "+what, func() {},
			func() (*client.Queue, error) { return r.p.in(ns).GetQueue(ctx, name) })
		if ok {
			paused = cur.Paused
		} else if diags.HasError() {
			return
		}
	}
	spec := m.spec(paused)
	q, err := retry(ctx, true, func() (*client.Queue, error) { return r.p.in(ns).PutQueue(ctx, name, spec) })
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" queue "+ns+"/"+name, err, "description", "concurrency", "key_concurrency",
			"key_concurrency.max", "throttle", "throttle.rate", "throttle.period", "push", "push.url", "push.mode", "push.timeout",
			"push.max_in_flight", "push.headers", "schema")
		return
	}
	m.set(q, ns)
}

func (r *queueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *queueModel) { r.put(ctx, req.Config, plan, &resp.Diagnostics, "create") })
}

func (r *queueResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[queueModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	q, ok := refresh(ctx, resp, "Could not read queue "+ns+"/"+name, func() (*client.Queue, error) { return r.p.in(ns).GetQueue(ctx, name) })
	if ok {
		state.set(q, ns)
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (r *queueResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, _ *queueModel) { r.put(ctx, req.Config, plan, &resp.Diagnostics, "update") })
}

func (r *queueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[queueModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	ns, name := state.Namespace.ValueString(), state.Name.ValueString()
	if !state.Force.ValueBool() {
		q, ok := readCall(ctx, &resp.Diagnostics, "Could not read queue "+ns+"/"+name+" before deleting it", func() {},
			func() (*client.Queue, error) { return r.p.in(ns).GetQueue(ctx, name) })
		if !ok { // gone already, or an error
			return
		}
		if n := heldJobs(q.Counts); n > 0 {
			resp.Diagnostics.AddError("Queue "+ns+"/"+name+" holds jobs",
				fmt.Sprintf("It holds %d jobs (%d pending, %d scheduled, %d active, %d retrying, %d held, %d dead, %d completed, %d cancelled); "+
					"deleting the queue would delete them.\n\nTo delete them with it, set force_destroy = true and apply, then destroy "+
					"or rename it. Or let workers finish them and retention remove them first.",
					n, q.Counts.Pending, q.Counts.Scheduled, q.Counts.Active, q.Counts.Retrying, q.Counts.Held, q.Counts.Dead,
					q.Counts.Completed, q.Counts.Cancelled))
			return
		}
	}
	deleteCall(ctx, &resp.Diagnostics, "Could not delete queue "+ns+"/"+name, func() error {
		_, err := r.p.in(ns).DeleteQueue(ctx, name)
		return err
	})
}

// heldJobs is every job the counts show, finished ones still kept
// included.
func heldJobs(c client.QueueCounts) int64 {
	return c.Pending + c.Scheduled + c.Active + c.Retrying + c.Held + c.Dead + c.Completed + c.Cancelled
}

// ImportState takes "<namespace>/<queue>".
func (r *queueResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if importNamed(ctx, req, resp, "<namespace>/<queue name>", nil, "") {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
	}
}
