package provider

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var (
	_ resource.ResourceWithConfigure   = (*scheduleResource)(nil)
	_ resource.ResourceWithImportState = (*scheduleResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*scheduleResource)(nil)
)

func newScheduleResource() resource.Resource { return &scheduleResource{} }

type scheduleResource struct{ namespacedBase }

type scheduleModel struct {
	ID         types.String         `tfsdk:"id"`
	Namespace  types.String         `tfsdk:"namespace"`
	Name       types.String         `tfsdk:"name"`
	Queue      types.String         `tfsdk:"queue"`
	Cron       types.String         `tfsdk:"cron"`
	Timezone   types.String         `tfsdk:"timezone"`
	Payload    jsontypes.Normalized `tfsdk:"payload"`
	Priority   types.String         `tfsdk:"priority"`
	UniqueKey  types.String         `tfsdk:"unique_key"`
	MaxRetries types.Int64          `tfsdk:"max_retries"`
	Enabled    types.Bool           `tfsdk:"enabled"`
	NextRun    types.String         `tfsdk:"next_run"`
	LastRun    types.String         `tfsdk:"last_run"`
	LastJobID  types.String         `tfsdk:"last_job_id"`
	CreatedAt  types.String         `tfsdk:"created_at"`
	UpdatedAt  types.String         `tfsdk:"updated_at"`
}

func (r *scheduleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_schedule"
}

func (r *scheduleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A cron schedule: every time `cron` matches in `timezone`, Jobbie enqueues one job " +
			"with `payload` on `queue` (exactly once per tick, across failovers).\n\n" +
			"Every attribute but `namespace` is changed in place (`PUT /api/v1/schedules/{id}` replaces the whole schedule; " +
			"its next run is computed afresh).",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("The schedule's id (`sch_…`)."),
			"namespace": namespaceAttribute("schedule"),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name, unique in its queue (1-128 bytes, no control characters, no `/`, not starting with `sch_`).",
				Required:            true,
				Validators:          []validator.String{scheduleName()},
			},
			"queue": schema.StringAttribute{
				MarkdownDescription: "Queue the schedule enqueues to.",
				Required:            true,
				Validators:          []validator.String{queueName()},
			},
			"cron": schema.StringAttribute{
				MarkdownDescription: "When to fire: a standard 5-field cron expression (`0 3 * * *`) or a descriptor " +
					"(`@hourly`, `@daily`, `@every 90s`; `@every` takes whole seconds, at least `1s`).",
				Required:   true,
				Validators: []validator.String{cronExpr()},
			},
			"timezone": timezoneAttribute(),
			"payload": schema.StringAttribute{
				MarkdownDescription: "Payload of every job, as a JSON string (use `jsonencode`). Left out, jobs get a `null` payload. " +
					"Formatting differences are not changes.",
				Optional:   true,
				CustomType: jsontypes.NormalizedType{},
			},
			"priority": schema.StringAttribute{
				MarkdownDescription: "Priority of every job: `critical`, `high` or `normal` (the default).",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("normal"),
				Validators:          []validator.String{stringvalidator.OneOf("critical", "high", "normal")},
			},
			"unique_key": schema.StringAttribute{
				MarkdownDescription: "Unique key of every job: a run is skipped while an earlier job with this key is unfinished.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthBetween(1, 256)},
			},
			"max_retries": schema.Int64Attribute{
				MarkdownDescription: "Retries of every job before it is dead (0-1000). Left out, every job takes its queue's " +
					"default when it is enqueued (3 when the queue has none), as an enqueue that leaves it out does; " +
					"a value set outside Terraform then shows as a change back to the queue's default.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(0, 1000)},
			},
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether the schedule fires. Defaults to `true`; enabling computes the next run from now " +
					"(runs missed while disabled are not made up).",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"next_run":    keptUntilNextRun(computedTime("When the schedule fires next (RFC 3339); null while disabled."), true),
			"last_run":    keptUntilNextRun(computedTime("When the schedule last fired (RFC 3339); null until it first fires."), false),
			"last_job_id": keptUntilNextRun(computedString("The job the schedule last enqueued; null until it first fires."), false),
			"created_at":  computedKept("When the schedule was created (RFC 3339)."),
			"updated_at":  computedTime("When the schedule was last changed (RFC 3339)."),
		},
	}
}

func (m *scheduleModel) request() client.ScheduleRequest {
	req := client.ScheduleRequest{
		Name: m.Name.ValueString(), Queue: m.Queue.ValueString(), Cron: m.Cron.ValueString(),
		Timezone: m.Timezone.ValueString(), Priority: client.Priority(m.Priority.ValueString()),
		UniqueKey: m.UniqueKey.ValueString(), MaxRetries: intPtr(m.MaxRetries), Enabled: m.Enabled.ValueBoolPointer(),
	}
	if !m.Payload.IsNull() {
		req.Payload = json.RawMessage(m.Payload.ValueString())
	}
	return req
}

// set copies what the API answered into m. A null payload stays null;
// timestamps are RFC 3339.
func (m *scheduleModel) set(s *client.Schedule, ns string) {
	m.ID = types.StringValue(s.ID)
	m.Namespace = types.StringValue(ns)
	m.Name = types.StringValue(s.Name)
	m.Queue = types.StringValue(s.Queue)
	m.Cron = types.StringValue(s.Cron)
	m.Timezone = types.StringValue(s.Timezone)
	if p := jsonValue(s.Payload); !p.IsNull() || m.Payload.ValueString() != "null" {
		m.Payload = p // (a payload written as jsonencode(null) stays so)
	}
	m.Priority = types.StringValue(s.Priority)
	m.UniqueKey = types.StringPointerValue(s.UniqueKey)
	m.MaxRetries = types.Int64Value(int64(s.MaxRetries))
	if s.MaxRetriesDefault {
		m.MaxRetries = types.Int64Null() // the queue's default, whatever it is now
	}
	m.Enabled = types.BoolValue(s.Enabled)
	m.NextRun = timeValue(s.NextRun)
	m.LastRun = timeValue(s.LastRun)
	m.LastJobID = types.StringPointerValue(s.LastJobID)
	m.CreatedAt = timeValue(s.CreatedAt)
	m.UpdatedAt = timeValue(s.UpdatedAt)
}

func (r *scheduleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *scheduleModel) {
		body, ns := plan.request(), plan.Namespace.ValueString()
		s, err := retry(ctx, true, func() (*client.Schedule, error) { return r.p.in(ns).CreateSchedule(ctx, body) })
		if err != nil {
			if !alreadyExists(&resp.Diagnostics, err, "Schedule", ns+"/"+plan.Queue.ValueString()+"/"+plan.Name.ValueString()) {
				apiError(&resp.Diagnostics, "Could not create schedule "+plan.Name.ValueString(), err)
			}
			return
		}
		plan.set(s, ns)
	})
}

func (r *scheduleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[scheduleModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	ns, id := state.Namespace.ValueString(), state.ID.ValueString()
	s, ok := refresh(ctx, resp, "Could not read schedule "+id, func() (*client.Schedule, error) { return r.p.in(ns).GetSchedule(ctx, id) })
	if ok {
		state.set(s, ns)
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (r *scheduleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, state *scheduleModel) {
		body := plan.request()
		ns, id := state.Namespace.ValueString(), state.ID.ValueString()
		s, err := retry(ctx, true, func() (*client.Schedule, error) { return r.p.in(ns).UpdateSchedule(ctx, id, body) })
		if err != nil {
			apiError(&resp.Diagnostics, "Could not update schedule "+id, err)
			return
		}
		plan.set(s, ns)
	})
}

func (r *scheduleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[scheduleModel](ctx, req.State, &resp.Diagnostics)
	if ok {
		ns, id := state.Namespace.ValueString(), state.ID.ValueString()
		deleteCall(ctx, &resp.Diagnostics, "Could not delete schedule "+id, func() error { return r.p.in(ns).DeleteSchedule(ctx, id) })
	}
}

// ImportState takes "<namespace>/<queue>/<name>", "<namespace>/<name>"
// (a name in one queue only) or "<namespace>/<schedule id>".
func (r *scheduleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ns, ref, ok := splitImportID(req.ID, &resp.Diagnostics, "<namespace>/<queue>/<schedule name> or <namespace>/<schedule name>")
	if !ok {
		return
	}
	sc, err := r.importRef(ctx, ns, ref)
	if (sc == nil && err == nil) || client.IsNotFound(err) {
		resp.Diagnostics.AddError("Schedule not found", "Namespace "+ns+" has no schedule "+ref+" (a name, a queue/name or an id).")
		return
	}
	if client.ErrorCode(err) == client.CodeAmbiguousName {
		resp.Diagnostics.AddError("Schedule name in several queues", apiDetail(err)+
			"\n\nImport it as <namespace>/<queue>/<schedule name> or <namespace>/<schedule id>.")
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "Could not import schedule "+req.ID, err)
		return
	}
	id := sc.ID
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), ns)...)
}

// importRef finds the schedule an import id names after its namespace,
// nil when there is none. Names are unique per queue, and neither a
// queue nor a name this provider manages holds a '/', so
// "<queue>/<name>" is the schedule of that name in that queue. Anything
// else the API resolves as a name or an id (a name in several queues is
// ambiguous_name).
func (r *scheduleResource) importRef(ctx context.Context, ns, ref string) (*client.Schedule, error) {
	c := r.p.in(ns)
	queue, name, both := strings.Cut(ref, "/")
	if !both {
		// The API takes a schedule's name wherever it takes its id.
		return retry(ctx, false, func() (*client.Schedule, error) { return c.GetSchedule(ctx, ref) })
	}
	list, err := retry(ctx, false, func() ([]client.Schedule, error) { return c.ListSchedules(ctx) })
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Queue == queue && list[i].Name == name {
			return &list[i], nil
		}
	}
	return nil, nil
}
