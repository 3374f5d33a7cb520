package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// A queue's payload schema in jobbie_queue: a JSON string compared by
// meaning, because the shard keeps it in canonical form (keys sorted, no
// spaces), which must never show as a change against what the
// configuration wrote; and its version, which only a change of the
// schema moves.

func queueSchemaAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "The [JSON Schema](https://json-schema.org/draft/2020-12) (draft 2020-12) every payload enqueued " +
			"to the queue must satisfy, as a JSON string (`jsonencode({...})` or `file(\"payment.schema.json\")`): an object or " +
			"a boolean, at most 65536 bytes, a `$ref` only inside the schema (`#/$defs/...`). An enqueue whose payload it refuses " +
			"(single, batch, chain step, callback, schedule) is a 400 naming the JSON pointer, and nothing is stored. The server " +
			"keeps it with its keys sorted and no spaces; that is no change from what the configuration writes, whatever its layout. " +
			"Left out, the queue has none: an apply removes a schema set outside Terraform. Changing it never touches jobs " +
			"already stored.",
		Optional:      true,
		CustomType:    jsontypes.NormalizedType{},
		Validators:    []validator.String{schemaShape{}},
		PlanModifiers: []planmodifier.String{sameJSON},
	}
}

func queueSchemaVersionAttribute() schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: "The version of its schema: each change of `schema` takes the next number, and each job records " +
			"the version its payload was checked against. 0: no schema.",
		Computed: true,
	}
}

// schemaSpec is what PutQueue sends for the schema v declares: null
// removes the queue's schema (left out would keep it).
func schemaSpec(v jsontypes.Normalized) json.RawMessage {
	if v.IsNull() || v.IsUnknown() {
		return client.NoSchema
	}
	return json.RawMessage(v.ValueString())
}

// schemaShape refuses at plan time what can never be a schema: JSON that
// is neither an object nor a boolean, or larger than the API takes. The
// API checks the rest (the draft's meta-schema, $ref) at apply, naming
// the attribute.
type schemaShape struct{}

func (schemaShape) Description(context.Context) string {
	return "a JSON Schema: an object or a boolean, at most 65536 bytes"
}
func (v schemaShape) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (schemaShape) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(req.ConfigValue.ValueString())) != nil {
		return // the type says it is not JSON
	}
	switch b := compact.Bytes(); {
	case len(b) > wire.MaxQueueSchemaBytes:
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid payload schema",
			fmt.Sprintf("The schema is %d bytes of JSON; the limit is %d.", len(b), wire.MaxQueueSchemaBytes))
	case b[0] != '{' && !bytes.Equal(b, []byte("true")) && !bytes.Equal(b, []byte("false")):
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid payload schema",
			"A JSON Schema is an object or a boolean, not "+oneLine(string(b))+".")
	}
}

// oneLine shortens s for a message.
func oneLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// sameJSON is samePlan for JSON: the canonical form an import reads,
// where the configuration has spaces and its own key order.
var sameJSON = samePlan{"JSON equal in meaning to the current value", sameJSONText}

// sameJSONText is whether a and b are the same JSON value (false if
// either is not JSON).
func sameJSONText(ctx context.Context, a, b string) bool {
	eq, diags := jsontypes.NewNormalizedValue(a).StringSemanticEquals(ctx, jsontypes.NewNormalizedValue(b))
	return eq && !diags.HasError()
}

// planSchemaVersion plans schema_version: 0 without a schema (the apply
// removes any), the current version when the schema stays the same on
// the same queue (the server keeps the version of a schema put again),
// and unknown when it changes or the queue is replaced, so only those
// show a new version.
func planSchemaVersion(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var planned jsontypes.Normalized
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("schema"), &planned)...)
	if resp.Diagnostics.HasError() || planned.IsUnknown() {
		return
	}
	if planned.IsNull() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("schema_version"), types.Int64Value(0))...)
		return
	}
	if req.State.Raw.IsNull() {
		return
	}
	for _, attr := range []string{"namespace", "name"} {
		var was, will types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(attr), &was)...)
		resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root(attr), &will)...)
		if resp.Diagnostics.HasError() || !was.Equal(will) {
			return // another queue: its own versions
		}
	}
	var prior jsontypes.Normalized
	var version types.Int64
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("schema"), &prior)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("schema_version"), &version)...)
	if resp.Diagnostics.HasError() || prior.IsNull() || version.IsNull() || version.IsUnknown() {
		return
	}
	if sameJSONText(ctx, prior.ValueString(), planned.ValueString()) {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("schema_version"), version)...)
	}
}
