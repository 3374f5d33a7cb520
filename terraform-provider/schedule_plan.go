package provider

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// fireMargin is how far off a schedule's next run must be at plan time
// for the plan to promise its run history unchanged by the apply: a run
// that fires between plan and apply changes last_run, and a planned value
// the apply then contradicts is an error in Terraform. A saved plan
// applied later than this, across a run, is refused so; plan again.
const fireMargin = 10 * time.Minute

// untilNextRun plans the state's value of a schedule's run attribute
// (next_run, last_run, last_job_id) instead of "(known after apply)" when
// an update cannot change it: the schedule will not fire before the apply
// (disabled, or its next run is fireMargin away), and, for next_run, the
// update leaves when it fires as it is (disabled before and after, or the
// same cron, time zone and enabled, not an @every, which counts from the
// update).
type untilNextRun struct{ isNextRun bool }

// keptUntilNextRun is a's plan modifier: see untilNextRun.
func keptUntilNextRun(a schema.StringAttribute, isNextRun bool) schema.StringAttribute {
	a.PlanModifiers = append(a.PlanModifiers, untilNextRun{isNextRun})
	return a
}

func (untilNextRun) Description(context.Context) string {
	return "unchanged by an update made well before the schedule's next run"
}

func (m untilNextRun) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m untilNextRun) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || !req.PlanValue.IsUnknown() {
		return // a create or a destroy, or already planned
	}
	var stateEnabled, planEnabled types.Bool
	var stateNext, stateCron, planCron, stateZone, planZone types.String
	d := req.State.GetAttribute(ctx, path.Root("enabled"), &stateEnabled)
	d.Append(req.Plan.GetAttribute(ctx, path.Root("enabled"), &planEnabled)...)
	d.Append(req.State.GetAttribute(ctx, path.Root("next_run"), &stateNext)...)
	d.Append(req.State.GetAttribute(ctx, path.Root("cron"), &stateCron)...)
	d.Append(req.Plan.GetAttribute(ctx, path.Root("cron"), &planCron)...)
	d.Append(req.State.GetAttribute(ctx, path.Root("timezone"), &stateZone)...)
	d.Append(req.Plan.GetAttribute(ctx, path.Root("timezone"), &planZone)...)
	if d.HasError() {
		return
	}
	if stateEnabled.ValueBool() && !farOff(stateNext) {
		return // it may fire before the apply
	}
	stillDisabled := !stateEnabled.ValueBool() && planEnabled.Equal(stateEnabled) // no next run before or after
	if m.isNextRun && !stillDisabled && (!planEnabled.Equal(stateEnabled) || !planCron.Equal(stateCron) ||
		!planZone.Equal(stateZone) || strings.HasPrefix(planCron.ValueString(), "@every")) {
		return // the update sets when it fires next
	}
	resp.PlanValue = req.StateValue
}

// farOff reports whether next, an RFC 3339 time, is fireMargin from now.
func farOff(next types.String) bool {
	t, err := time.Parse(time.RFC3339, next.ValueString())
	return err == nil && time.Until(t) > fireMargin
}
