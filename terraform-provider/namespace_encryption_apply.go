package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

// The plan and the calls of jobbie_namespace_encryption: each apply sends
// only what differs from what the API holds, so a key is sent only when
// its id changes and a revoke only once.

// ModifyPlan plans the tenant key's id from the configured key (a new id
// is a rotation), warns of a revoke, and refuses what would quietly seal
// under the operator's key once the tenant's was revoked.
func (r *namespaceEncryptionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planDefaultNamespace(ctx, r.p, req, resp)
	if req.Plan.Raw.IsNull() || resp.Diagnostics.HasError() {
		return
	}
	var plan, cfg namespaceEncryptionModel
	resp.Diagnostics.Append(resp.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	var state *namespaceEncryptionModel
	if !req.State.Raw.IsNull() {
		state = &namespaceEncryptionModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	keyGiven := !cfg.TenantKeyWO.IsNull()
	switch {
	case cfg.TenantKeyWO.IsUnknown():
		plan.TenantKeyID = types.StringUnknown()
	case keyGiven:
		id, err := client.TenantKeyID(cfg.TenantKeyWO.ValueString())
		if err != nil {
			return // ValidateConfig said so
		}
		plan.TenantKeyID = types.StringValue(id)
	case plan.Revoked.ValueBool():
		plan.TenantKeyID = types.StringNull()
	case state != nil:
		plan.TenantKeyID = state.TenantKeyID
	default:
		plan.TenantKeyID = types.StringUnknown() // whatever the namespace has
	}
	revoking := plan.Revoked.ValueBool() && (state == nil || !state.Revoked.ValueBool())
	if state != nil && state.Revoked.ValueBool() && !plan.Revoked.ValueBool() && !keyGiven {
		resp.Diagnostics.AddAttributeError(path.Root("revoked"), "The tenant key was revoked",
			"Namespace "+plan.Namespace.ValueString()+"'s tenant key was revoked: give a new tenant_key_wo to start the next "+
				"generation, or set revoked = true. Nothing is sealed under the operator's key in its place.")
		return
	}
	changed := state == nil || !plan.TenantKeyID.Equal(state.TenantKeyID) || !plan.Enabled.Equal(state.Enabled) ||
		!plan.SearchDecrypt.Equal(state.SearchDecrypt) || !plan.Revoked.Equal(state.Revoked)
	if state != nil && changed && state.Revoked.ValueBool() && plan.Revoked.ValueBool() && plan.Enabled.ValueBool() {
		// The API starts a generation under the operator's master key on
		// any change of a revoked namespace that stays enabled.
		resp.Diagnostics.AddAttributeError(path.Root("revoked"), "The tenant key was revoked",
			"While namespace "+plan.Namespace.ValueString()+"'s tenant key is revoked, only enabled = false may change: "+
				"give a new tenant_key_wo (and revoked = false) to seal again.")
		return
	}
	if revoking {
		what := "the namespace's tenant key"
		if state != nil && !state.TenantKeyID.IsNull() {
			what = "tenant key " + state.TenantKeyID.ValueString()
		}
		resp.Diagnostics.AddAttributeWarning(path.Root("revoked"), "This apply revokes a tenant key",
			"Applying revokes "+what+" of namespace "+plan.Namespace.ValueString()+": everything sealed under it becomes "+
				"unreadable, for good, by anyone. Other namespaces are untouched.")
	}
	if !changed {
		return
	}
	switch {
	case keyGiven:
		plan.KeySource = types.StringValue(client.KeySourceTenant)
	case revoking:
		plan.KeySource = types.StringValue(client.KeySourceRevoked)
	default:
		plan.KeySource = types.StringUnknown()
	}
	plan.Generation = types.Int64Unknown()
	plan.RevokedKeys = types.ListUnknown(revokedKeyType)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// apply sends what plan changes from held (the API's settings) with the
// configured key, and reads the answer into plan.
func (r *namespaceEncryptionResource) apply(ctx context.Context, plan, cfg *namespaceEncryptionModel, held *client.Encryption, diags *diag.Diagnostics, what string) {
	ns := plan.Namespace.ValueString()
	var spec client.EncryptionSpec
	send := false
	if enabled := plan.Enabled.ValueBool(); enabled != held.Enabled {
		spec.Enabled, send = &enabled, true
	}
	if sd := plan.SearchDecrypt.ValueBool(); sd != held.SearchDecrypt {
		spec.SearchDecrypt, send = &sd, true
	}
	if !cfg.TenantKeyWO.IsNull() {
		id, _ := client.TenantKeyID(cfg.TenantKeyWO.ValueString())
		if held.TenantKeyID == nil || *held.TenantKeyID != id {
			spec.TenantKey, send = cfg.TenantKeyWO.ValueString(), true
		}
	}
	isRevoked := held.KeySource == client.KeySourceRevoked
	switch {
	case plan.Revoked.ValueBool() && !isRevoked:
		spec.RevokeTenantKey, send = true, true
	case !plan.Revoked.ValueBool() && isRevoked && spec.TenantKey == "":
		diags.AddAttributeError(path.Root("revoked"), "The tenant key was revoked",
			"Namespace "+ns+"'s tenant key was revoked: give a new tenant_key_wo to start the next generation, or set revoked = true.")
		return
	}
	out := held
	if send {
		var err error
		out, err = retry(ctx, true, func() (*client.Encryption, error) { return r.p.in(ns).SetEncryption(ctx, spec) })
		if err != nil {
			apiErrorAt(diags, "Could not "+what+" the encryption of namespace "+ns, err, "revoke_tenant_key", "tenant_key")
			return
		}
	}
	plan.fromAPI(out, ns, diags)
}

// fromAPI takes the settings as the API answers them; the key stays
// null, as write-only values do.
func (m *namespaceEncryptionModel) fromAPI(e *client.Encryption, ns string, diags *diag.Diagnostics) {
	m.ID, m.Namespace = types.StringValue(ns), types.StringValue(ns)
	m.Enabled, m.SearchDecrypt = types.BoolValue(e.Enabled), types.BoolValue(e.SearchDecrypt)
	m.TenantKeyWO = types.StringNull()
	m.Revoked = types.BoolValue(e.KeySource == client.KeySourceRevoked)
	m.TenantKeyID = types.StringPointerValue(e.TenantKeyID)
	m.KeySource = types.StringValue(e.KeySource)
	m.Generation = types.Int64Value(int64(e.Generation))
	keys := make([]attr.Value, 0, len(e.RevokedKeys))
	for _, k := range e.RevokedKeys {
		at := k.RevokedAt.UTC().Format(time.RFC3339Nano)
		v, d := types.ObjectValue(revokedKeyType.AttrTypes, map[string]attr.Value{
			"key_id": types.StringValue(k.KeyID), "generation": types.Int64Value(int64(k.Generation)), "revoked_at": types.StringValue(at),
		})
		diags.Append(d...)
		keys = append(keys, v)
	}
	list, d := types.ListValue(revokedKeyType, keys)
	diags.Append(d...)
	m.RevokedKeys = list
}

// put is Create and Update: the plan's settings over what the API holds
// now (a namespace's settings and keys are taken over on create).
func (r *namespaceEncryptionResource) put(ctx context.Context, plan *namespaceEncryptionModel, config tfsdk.Config, diags *diag.Diagnostics, what string) {
	cfg, ok := load[namespaceEncryptionModel](ctx, config, diags)
	if !ok {
		return
	}
	ns := plan.Namespace.ValueString()
	held, ok := readCall(ctx, diags, "Could not read the encryption of namespace "+ns, nil,
		func() (*client.Encryption, error) { return r.p.in(ns).GetEncryption(ctx) })
	if ok {
		r.apply(ctx, plan, cfg, held, diags, what)
	}
}
