package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

// A namespace's encryption at rest is a resource of its own, as its
// egress allow-list is: the namespace's shard keeps it. The tenant key is
// write-only (never in plan or state); the plan tells a new key by its id
// (client.TenantKeyID), which the API answers, so changing the key is an
// update that rotates it. Revoking is an attribute set on purpose, never
// a destroy: destroying stops sealing and keeps every key.

var (
	_ resource.ResourceWithConfigure      = (*namespaceEncryptionResource)(nil)
	_ resource.ResourceWithImportState    = (*namespaceEncryptionResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*namespaceEncryptionResource)(nil)
	_ resource.ResourceWithValidateConfig = (*namespaceEncryptionResource)(nil)
)

func newNamespaceEncryptionResource() resource.Resource {
	r := &namespaceEncryptionResource{}
	r.namespaceSetting = namespaceSetting[namespaceEncryptionModel, *client.Encryption]{
		noun: "the encryption", removal: "turn off", write: r.put, set: (*namespaceEncryptionModel).fromAPI,
		get: func(ctx context.Context, c *client.Client, _ string) (*client.Encryption, error) {
			return c.GetEncryption(ctx)
		},
		// Stops sealing and search over opened values, and keeps every
		// key: what was sealed stays readable. It never revokes (revoked
		// = true does, on purpose).
		del: func(ctx context.Context, c *client.Client, _ string) error {
			_, err := c.SetEncryption(ctx, client.EncryptionSpec{Enabled: new(false), SearchDecrypt: new(false)})
			return err
		},
	}
	return r
}

// Its ModifyPlan is its own (namespace_encryption_apply.go), and so is
// what a write sends.
type namespaceEncryptionResource struct {
	namespaceSetting[namespaceEncryptionModel, *client.Encryption]
}

type namespaceEncryptionModel struct {
	ID            types.String `tfsdk:"id"`
	Namespace     types.String `tfsdk:"namespace"`
	Enabled       types.Bool   `tfsdk:"enabled"`
	SearchDecrypt types.Bool   `tfsdk:"search_decrypt"`
	TenantKeyWO   types.String `tfsdk:"tenant_key_wo"`
	Revoked       types.Bool   `tfsdk:"revoked"`
	TenantKeyID   types.String `tfsdk:"tenant_key_id"`
	KeySource     types.String `tfsdk:"key_source"`
	Generation    types.Int64  `tfsdk:"generation"`
	RevokedKeys   types.List   `tfsdk:"revoked_keys"`
}

var revokedKeyType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"key_id": types.StringType, "generation": types.Int64Type, "revoked_at": types.StringType,
}}

func (r *namespaceEncryptionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespace_encryption"
}

func (r *namespaceEncryptionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A namespace's encryption at rest: its jobs' payloads, results, checkpoints and error texts " +
			"sealed on its shard (the Raft log, Pebble, snapshots and backups hold ciphertext only), under the operator's " +
			"master key or the tenant's own key.\n\n`PUT /api/v1/encryption` changes it in place; settings and keys the " +
			"namespace already has are taken over. The tenant key is write-only (`tenant_key_wo`, Terraform 1.11 or later): " +
			"it is sent, never stored in the plan or the state; `tenant_key_id` names it. **Changing the key rotates it**: " +
			"the namespace's keys are wrapped again, nothing is rewritten, everything stays readable.\n\n" +
			"**Destroying the resource never revokes**: it stops sealing what new jobs store (`enabled` and `search_decrypt` " +
			"false) and keeps every key, so what was sealed stays readable. Making data unreadable is done only by setting " +
			"`revoked = true` and applying, which the plan warns of.",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("The namespace's name; also the import id."),
			"namespace": namespaceAttribute("encryption settings"),
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Seal what new jobs store. `false` stops sealing; what was sealed stays readable while " +
					"its keys are kept. Defaults to `true`.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			},
			"search_decrypt": schema.BoolAttribute{
				MarkdownDescription: "Let a search with `payload_contains`, `payload_jq` or `error_contains` open values " +
					"while it scans; without it such a search is refused. Defaults to `false`.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			},
			"tenant_key_wo": schema.StringAttribute{
				MarkdownDescription: "The tenant's key: 32 random bytes in base64 or hex (`openssl rand -base64 32`), " +
					"write-only: never in the plan or the state. The first wraps the namespace's keys in place of the " +
					"operator's master key; another one (a different `tenant_key_id`) rotates it. Left out, the namespace " +
					"keeps the key it has. After a revoke, a key starts the next `generation`. Keep a copy: Jobbie " +
					"holds it only wrapped, and answers it to no one.",
				Optional: true, Sensitive: true, WriteOnly: true,
			},
			"revoked": schema.BoolAttribute{
				MarkdownDescription: "`true` revokes the tenant key: it is deleted with the namespace's keys it wraps, and " +
					"everything the namespace sealed under them is **unreadable from then on, by anyone** (reads answer " +
					"`409 encryption_key_revoked`), as are enqueues until a new key is given. Other namespaces are " +
					"untouched. It cannot go with `tenant_key_wo`; going back to `false` needs a new `tenant_key_wo`, which " +
					"starts the next generation (what was revoked stays unreadable); while it is `true`, only `enabled = false` " +
					"may change, so nothing is sealed under the operator's key in the revoked one's place. Defaults to " +
					"`false`; `true` when the API says the key was revoked.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			},
			"tenant_key_id": schema.StringAttribute{
				MarkdownDescription: "Names the tenant key in use (a digest, safe to show); null when there is none.",
				Computed:            true,
			},
			"key_source": schema.StringAttribute{
				MarkdownDescription: "What wraps the namespace's keys: `none` (nothing sealed yet), `operator`, `tenant`, " +
					"or `revoked` (a new tenant key is needed to seal again).",
				Computed: true,
			},
			"generation": schema.Int64Attribute{
				MarkdownDescription: "Counts the namespace's data keys: a revoke ends one, the next key starts the next.",
				Computed:            true,
			},
			"revoked_keys": schema.ListNestedAttribute{
				MarkdownDescription: "The tenant keys revoked, oldest first, with the generation of data each made unreadable.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key_id":     computedString("The revoked key's id."),
					"generation": schema.Int64Attribute{MarkdownDescription: "The generation it made unreadable.", Computed: true},
					"revoked_at": computedTime("When it was revoked (RFC 3339)."),
				}},
			},
		},
	}
}

// ValidateConfig refuses a key the API would refuse, and a revoke with a
// key, before anything is planned.
func (r *namespaceEncryptionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg namespaceEncryptionModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...); resp.Diagnostics.HasError() {
		return
	}
	if cfg.Revoked.ValueBool() && !cfg.TenantKeyWO.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("revoked"), "Revoked with a tenant key",
			"revoked = true cannot go with tenant_key_wo: revoke, then give a new key (and revoked = false) in a later apply.")
	}
	if cfg.TenantKeyWO.IsNull() || cfg.TenantKeyWO.IsUnknown() {
		return
	}
	if _, err := client.TenantKeyID(cfg.TenantKeyWO.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("tenant_key_wo"), "Invalid tenant key", err.Error())
	}
}
