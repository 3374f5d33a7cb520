package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

var (
	_ resource.ResourceWithConfigure   = (*backupPolicyResource)(nil)
	_ resource.ResourceWithImportState = (*backupPolicyResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*backupPolicyResource)(nil)
)

func newBackupPolicyResource() resource.Resource {
	r := &backupPolicyResource{}
	r.namespaceSetting = namespaceSetting[backupPolicyModel, *client.BackupPolicy]{
		noun: "the backup policy", removal: "delete", write: r.put, set: (*backupPolicyModel).set,
		get: func(ctx context.Context, c *client.Client, ns string) (*client.BackupPolicy, error) {
			return c.GetBackupPolicy(ctx, ns)
		},
		// The backups the policy took stay.
		del: func(ctx context.Context, c *client.Client, ns string) error { return c.DeleteBackupPolicy(ctx, ns) },
	}
	return r
}

type backupPolicyResource struct {
	namespaceSetting[backupPolicyModel, *client.BackupPolicy]
}

type backupPolicyModel struct {
	ID        types.String `tfsdk:"id"`
	Namespace types.String `tfsdk:"namespace"`
	Cron      types.String `tfsdk:"cron"`
	Timezone  types.String `tfsdk:"timezone"`
	Retention types.Int64  `tfsdk:"retention"`
	Enabled   types.Bool   `tfsdk:"enabled"`
	LastRunAt types.String `tfsdk:"last_run_at"`
	NextRunAt types.String `tfsdk:"next_run_at"`
}

// The attributes the API may name as a policy request's problem.
var backupPolicyFields = []string{"cron", "timezone", "retention"}

func (r *backupPolicyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_backup_policy"
}

func (r *backupPolicyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A namespace's backup policy: every time `cron` matches in `timezone`, the control plane backs " +
			"the namespace up (a backup of kind `scheduled`) and keeps the newest `retention` of its completed scheduled " +
			"backups, deleting older ones (manual and `pre_restore` backups are never pruned). A namespace has at most one policy.\n\n" +
			"`PUT /api/v1/namespaces/{name}/backup-policy` sets the whole policy, so every attribute but `namespace` changes " +
			"in place; a policy the namespace already has is taken over. Destroying the resource removes the policy " +
			"(`DELETE`); the backups it took stay.",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("The namespace's name; also the import id."),
			"namespace": namespaceAttribute("backup policy"),
			"cron": schema.StringAttribute{
				MarkdownDescription: "When to back up: a standard 5-field cron expression (`0 3 * * *`) or a descriptor " +
					"(`@hourly`, `@daily`, `@every 6h`).",
				Required:   true,
				Validators: []validator.String{backupCronExpr()},
			},
			"timezone": timezoneAttribute(),
			"retention": schema.Int64Attribute{
				MarkdownDescription: "How many completed scheduled backups to keep, 1 to 1000.",
				Required:            true,
				Validators:          []validator.Int64{int64validator.Between(1, wire.MaxBackupRetention)},
			},
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether the policy runs. Defaults to `true`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
			"last_run_at": computedTime("When the policy last started a backup (RFC 3339); null until it first runs."),
			"next_run_at": computedTime("When the policy runs next (RFC 3339); null while disabled."),
		},
	}
}

func (m *backupPolicyModel) request() client.BackupPolicyRequest {
	return client.BackupPolicyRequest{Cron: m.Cron.ValueString(), Timezone: m.Timezone.ValueString(),
		Retention: int(m.Retention.ValueInt64()), Enabled: m.Enabled.ValueBoolPointer()}
}

func (m *backupPolicyModel) set(p *client.BackupPolicy, ns string, _ *diag.Diagnostics) {
	m.ID = types.StringValue(ns)
	m.Namespace = types.StringValue(ns)
	m.Cron = types.StringValue(p.Cron)
	m.Timezone = types.StringValue(p.Timezone)
	m.Retention = types.Int64Value(int64(p.Retention))
	m.Enabled = types.BoolValue(p.Enabled)
	m.LastRunAt = timeValue(p.LastRunAt)
	m.NextRunAt = timeValue(p.NextRunAt)
}

// put sets the policy the plan describes and reads the answer into plan.
func (r *backupPolicyResource) put(ctx context.Context, plan *backupPolicyModel, _ tfsdk.Config, diags *diag.Diagnostics, what string) {
	ns, body := plan.Namespace.ValueString(), plan.request()
	p, err := retry(ctx, true, func() (*client.BackupPolicy, error) { return r.p.in(ns).PutBackupPolicy(ctx, ns, body) })
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" the backup policy of namespace "+ns, err, backupPolicyFields...)
		return
	}
	plan.set(p, ns, diags)
}
