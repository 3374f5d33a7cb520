package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// namespaceAttribute is the namespace of a namespaced resource: set, or
// the provider's namespace (planDefaultNamespace fills it in at plan
// time); changing it replaces the resource.
func namespaceAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Namespace of the " + what + ". Defaults to the provider's `namespace`. Changing it replaces the " + what + ".",
		Optional:            true,
		Computed:            true,
		Validators:          []validator.String{namespaceName()},
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
}

// planDefaultNamespace plans the provider's namespace for a resource whose
// configuration names none, and replaces the resource when that moves it
// to another namespace.
func planDefaultNamespace(ctx context.Context, p *providerData, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || p == nil {
		return
	}
	var cfg types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("namespace"), &cfg)...)
	if !cfg.IsNull() || resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("namespace"), p.namespace)...)
	if req.State.Raw.IsNull() {
		return
	}
	var prior types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("namespace"), &prior)...)
	if prior.ValueString() != p.namespace {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("namespace"))
	}
}

// computedKept is a computed string that a plan keeps as the state has
// it (an id, a creation time): the API never changes it in place.
func computedKept(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

// computedSecret is computedKept for a secret the API shows once.
func computedSecret(desc string) schema.StringAttribute {
	a := computedKept(desc)
	a.Sensitive = true
	return a
}

// descriptionAttribute is a resource's free text: "" when left out, at
// most maxDescription bytes.
func descriptionAttribute(desc string, mods ...planmodifier.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Default: stringdefault.StaticString(""),
		Validators: []validator.String{stringvalidator.LengthAtMost(maxDescription)}, PlanModifiers: mods}
}

// timezoneAttribute is the IANA time zone a resource's cron is read in,
// UTC when left out.
func timezoneAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "IANA time zone `cron` is read in, e.g. `Europe/Paris`. Defaults to `UTC`.",
		Optional:            true, Computed: true, Default: stringdefault.StaticString("UTC"),
		Validators: []validator.String{timezone()},
	}
}

func computedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func computedTime(desc string) schema.StringAttribute { return computedString(desc) }

// splitImportID splits "<namespace>/<rest>".
func splitImportID(id string, diags *diag.Diagnostics, want string) (ns, rest string, ok bool) {
	ns, rest, ok = strings.Cut(id, "/")
	if !ok || ns == "" || rest == "" {
		diags.AddError("Invalid import id", "Expected an import id of the form "+want+", got "+id+".")
		return "", "", false
	}
	return ns, rest, true
}

func intPtr(v types.Int64) *int {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	i := int(v.ValueInt64())
	return &i
}

func timeValue(t *time.Time) types.String {
	if t == nil {
		return types.StringNull()
	}
	return types.StringValue(t.UTC().Format(time.RFC3339Nano))
}

// jsonValue is a JSON payload as the API returned it; absent or null is a
// null attribute.
func jsonValue(raw json.RawMessage) jsontypes.Normalized {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return jsontypes.NewNormalizedNull()
	}
	return jsontypes.NewNormalizedValue(string(raw))
}

// samePlan plans the prior value of a string the configuration writes
// differently but means the same, so a respelling is never a change.
type samePlan struct {
	what  string // what is no change: "a duration equal to the current one"
	equal func(ctx context.Context, state, plan string) bool
}

func (m samePlan) Description(context.Context) string             { return m.what + " is no change" }
func (m samePlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m samePlan) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.StateValue.IsUnknown() || req.PlanValue.IsNull() || req.PlanValue.IsUnknown() {
		return
	}
	if m.equal(ctx, req.StateValue.ValueString(), req.PlanValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// sameDuration is samePlan for a duration: "1m" where the state holds
// "60s".
var sameDuration = samePlan{"a duration equal to the current one", func(_ context.Context, a, b string) bool {
	x, err1 := time.ParseDuration(a)
	y, err2 := time.ParseDuration(b)
	return err1 == nil && err2 == nil && x == y
}}
